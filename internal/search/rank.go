package search

// byteRank orders bytes by how common they are in source code and text:
// 255 is the most common (space), 0 the rarest. It was counted once over
// the Go source tree and some English documentation; only the order
// matters. Literal search anchors on the rarest byte of a needle, so
// memchr skips most of the haystack (ripgrep does the same with a similar
// table).
var byteRank = [256]uint8{
	0, 21, 13, 17, 27, 22, 33, 38, 1, 245, 246, 14, 48, 70, 45, 2,
	23, 42, 43, 39, 7, 34, 60, 35, 12, 3, 8, 32, 30, 18, 24, 25,
	255, 169, 224, 176, 163, 166, 170, 185, 229, 230, 184, 175, 242, 195, 235, 234,
	244, 232, 226, 217, 218, 205, 214, 196, 210, 200, 225, 179, 188, 222, 189, 158,
	160, 227, 192, 209, 203, 215, 193, 182, 181, 211, 162, 168, 198, 197, 194, 208,
	204, 171, 212, 220, 216, 183, 191, 180, 190, 178, 165, 187, 201, 186, 157, 221,
	173, 250, 223, 241, 240, 254, 238, 228, 231, 249, 177, 199, 243, 233, 251, 247,
	236, 167, 252, 248, 253, 237, 213, 202, 239, 219, 174, 207, 172, 206, 156, 19,
	153, 127, 145, 136, 115, 131, 122, 132, 137, 116, 108, 76, 97, 79, 87, 135,
	103, 120, 94, 105, 146, 126, 93, 119, 130, 138, 86, 80, 129, 125, 92, 152,
	161, 96, 81, 91, 124, 107, 100, 113, 90, 144, 88, 106, 104, 102, 85, 77,
	89, 123, 112, 110, 99, 95, 114, 159, 148, 143, 111, 101, 134, 109, 121, 82,
	9, 15, 164, 149, 71, 74, 51, 63, 57, 69, 67, 59, 78, 65, 150, 118,
	154, 139, 52, 56, 55, 64, 84, 133, 141, 142, 61, 62, 50, 4, 28, 49,
	147, 128, 155, 140, 72, 98, 117, 83, 75, 68, 66, 53, 58, 54, 16, 73,
	151, 20, 36, 47, 41, 29, 44, 5, 40, 10, 11, 6, 26, 46, 37, 31,
}

// foldRank is the rank used for a byte searched case-insensitively: an
// ASCII letter costs as much as its commoner case, plus a little for the
// second memchr.
func foldRank(c byte) int {
	if lc := lower(c); lc >= 'a' && lc <= 'z' {
		return max(int(byteRank[lc]), int(byteRank[lc-32])) + 8
	}
	return int(byteRank[c])
}

func lower(c byte) byte {
	if c >= 'A' && c <= 'Z' {
		return c + 32
	}
	return c
}

func upper(c byte) byte {
	if c >= 'a' && c <= 'z' {
		return c - 32
	}
	return c
}
