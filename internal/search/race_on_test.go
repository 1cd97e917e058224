//go:build race

package search

// raceOn: the race detector slows the rg differential about sixfold, so
// it runs fewer cases (the plain run covers the full set).
const raceOn = true
