package reader

import (
	"testing"

	"github.com/stretchr/testify/require"
)

func TestGeneralNumber(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		in   float64
		want string
	}{
		{20676798568, "20676798568"}, {2.0676798568e10, "20676798568"}, {123456789012345, "123456789012345"},
		{-42, "-42"}, {0, "0"}, {0.1, "0.1"}, {0.30000000000000004, "0.3"}, {1.0 / 3, "0.333333333333333"},
		{-1234.5, "-1234.5"}, {1e-7, "1E-07"}, {125000.5, "125000.5"},
		// 16 digits and more: Excel kept 15, the rest is lost.
		{9912143456789012, "9.91214E+15"}, {9.91214345678901e18, "9.91214E+18"}, {1e15, "1E+15"}, {-1.5e20, "-1.5E+20"},
	} {
		require.Equal(t, tt.want, generalNumber(tt.in), "%v", tt.in)
	}
}

func TestExcelDate(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		serial   float64
		date1904 bool
		kind     numKind
		want     string
	}{
		{1, false, kindDate, "1900-01-01"},
		{59, false, kindDate, "1900-02-28"},
		{60, false, kindDate, "1900-02-29"}, // Lotus's leap day, which Excel kept
		{60.5, false, kindDateTime, "1900-02-29T12:00:00"},
		{61, false, kindDate, "1900-03-01"},
		{45292, false, kindDate, "2024-01-01"},
		{45327.577083333334, false, kindDateTime, "2024-02-05T13:51:00"},
		{45327.5770833449, false, kindDateTime, "2024-02-05T13:51:00.001"},
		{2958465, false, kindDate, "9999-12-31"},
		{0.75, false, kindTime, "18:00:00"},
		{0, true, kindDate, "1904-01-01"},
		{43861, true, kindDate, "2024-02-01"},
		{43861.5625, true, kindDateTime, "2024-02-01T13:30:00"},
		{0.99999999, false, kindTime, "23:59:59.999"},
		{0.9999999999, false, kindTime, "00:00:00"},                // rounds to the next day's midnight
		{0.9999999999, false, kindDateTime, "1900-01-01T00:00:00"}, // rounds to day 1
	} {
		got, ok := excelDate(tt.serial, tt.date1904, tt.kind)
		require.True(t, ok, "%v", tt.serial)
		require.Equal(t, tt.want, got, "%v (1904: %v)", tt.serial, tt.date1904)
	}
	for _, serial := range []float64{-1, 2958466} {
		_, ok := excelDate(serial, false, kindDate)
		require.False(t, ok, "%v", serial)
	}
}

func TestFormatKind(t *testing.T) {
	t.Parallel()
	builtin := map[int]numKind{0: kindNumber, 1: kindNumber, 4: kindNumber, 10: kindNumber, 11: kindNumber, 14: kindDate, 15: kindDate,
		17: kindDate, 18: kindTime, 21: kindTime, 22: kindDateTime, 45: kindTime, 46: kindTime, 47: kindTime, 49: kindNumber, 57: kindDate}
	for id, want := range builtin {
		require.Equal(t, want, formatKind(id, "", false), "built-in %d", id)
	}
	for code, want := range map[string]numKind{
		`yyyy\-mm\-dd`:                       kindDate,
		`yyyy\-mm\-dd\ hh:mm:ss`:             kindDateTime,
		`[$-409]m/d/yy\ h:mm\ AM/PM;@`:       kindDateTime,
		`[$-F800]dddd\,\ mmmm\ dd\,\ yyyy`:   kindDate,
		`mmm\-yy`:                            kindDate,
		`mm:ss`:                              kindTime,
		`[h]:mm:ss`:                          kindTime,
		`[mm]`:                               kindTime,
		`#,##0.00\ "€";[Red]\-#,##0.00\ "€"`: kindNumber,
		`0.00E+00`:                           kindNumber,
		`#,##0 "days"`:                       kindNumber,
		`General`:                            kindNumber,
		`0%`:                                 kindNumber,
		`@`:                                  kindNumber,
		`_-* #,##0.00\ _€_-;\-* #,##0.00\ _€_-`: kindNumber,
		`[Red]0.00`:   kindNumber,
		`"Due "d"th"`: kindDate,
	} {
		require.Equal(t, want, formatKind(164, code, true), code)
	}
}

func TestParseCellRef(t *testing.T) {
	t.Parallel()
	for ref, want := range map[string][3]int{"A1": {0, 1, 1}, "C5": {2, 5, 1}, "AB12": {27, 12, 1}, "XFD1048576": {16383, 1048576, 1},
		"c5": {2, 5, 1}, "D": {3, 0, 1}, "XFE1": {0, 0, 0}, "A0": {0, 0, 0}, "1A": {0, 0, 0}, "A+1": {0, 0, 0}, "": {0, 0, 0}, "A1048577": {0, 0, 0}} {
		col, row, ok := parseCellRef(ref)
		if want[2] == 0 {
			require.False(t, ok, ref)
			continue
		}
		require.True(t, ok, ref)
		require.Equal(t, [2]int{want[0], want[1]}, [2]int{col, row}, ref)
	}
	require.Equal(t, "A", colLetters(0))
	require.Equal(t, "Z", colLetters(25))
	require.Equal(t, "AA", colLetters(26))
	require.Equal(t, "XFD", colLetters(16383))
	require.Equal(t, "a\r\nb_x", decodeXString("a_x000D_\nb_x"))
	require.Equal(t, "_x000D_", decodeXString("_x005F_x000D_"))
}
