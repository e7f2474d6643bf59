package reader

// WithXLSXLimits sets the bounds of a cell and of a workbook's shared
// strings, for the tests of package reader_test.
func WithXLSXLimits(opt ReadOptions, cell, sharedStrings int64) ReadOptions {
	opt.cellLimit, opt.sstLimit = cell, sharedStrings
	return opt
}
