package reader

// Plural is one when n is 1, else many: the word for a count of n in a
// message ("1 line", "3 lines"), for the importer's packages.
func Plural(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}
