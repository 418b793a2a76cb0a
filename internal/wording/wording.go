package wording

import "strconv"

// Thousands writes 176555 as 176,555.
func Thousands(n int64) string {
	if n < 0 {
		return "-" + Thousands(-n)
	}
	s := strconv.FormatInt(n, 10)
	for i := len(s) - 3; i > 0; i -= 3 {
		s = s[:i] + "," + s[i:]
	}
	return s
}

// Plural is word for one and word+"s" for any other count.
func Plural(n int, word string) string {
	if n == 1 {
		return word
	}
	return word + "s"
}

// Count is the count and its word: "1 GPU", "4 GPUs".
func Count(n int, word string) string {
	return strconv.Itoa(n) + " " + Plural(n, word)
}
