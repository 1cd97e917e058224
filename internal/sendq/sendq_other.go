//go:build !linux && !darwin

package sendq

func setLowWater(uintptr, int) error { return nil }
