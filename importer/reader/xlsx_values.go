package reader

import (
	"math"
	"strconv"
	"strings"
	"time"
)

// numKind is how a cell format shows a number: as a number (Excel's
// General), a date, a date and time, or a time of day.
type numKind uint8

const (
	kindNumber numKind = iota
	kindDate
	kindDateTime
	kindTime
)

// formatKind tells how number format id shows a number: a built-in format
// by its id, a custom one (custom: the workbook defines id) by its code.
func formatKind(id int, code string, custom bool) numKind {
	if !custom {
		switch {
		case id >= 14 && id <= 17, id >= 27 && id <= 31, id >= 34 && id <= 36, id >= 50 && id <= 58:
			return kindDate // 14 is m/d/yyyy; 27–36 and 50–58 are the East Asian dates
		case id >= 18 && id <= 21, id >= 45 && id <= 47, id == 32, id == 33:
			return kindTime
		case id == 22:
			return kindDateTime // m/d/yyyy h:mm
		}
		return kindNumber
	}
	return codeKind(code)
}

// codeKind tells from a custom number format's code whether it shows a
// date, a time or both: the letters y, d (and m, e for years, g for eras)
// outside quoted text, escapes and [colour] or [$-locale] brackets are a
// date's; h and s (and [h], [mm], [ss], elapsed time) a time's; m alone is
// a month, next to h or s a minute. Only the first section (before ";")
// is looked at.
func codeKind(code string) numKind {
	var date, tm, month bool
	for i := 0; i < len(code); i++ {
		c := code[i]
		switch c {
		case ';':
			i = len(code)
			continue
		case '"':
			if j := strings.IndexByte(code[i+1:], '"'); j >= 0 {
				i += j + 1
			} else {
				i = len(code)
			}
			continue
		case '\\', '_', '*':
			i++ // an escaped character, a space as wide as it, a fill
			continue
		case '[':
			j := strings.IndexByte(code[i:], ']')
			if j < 0 {
				i = len(code)
				continue
			}
			switch strings.ToLower(strings.Trim(code[i+1:i+j], "hms")) {
			case "": // [h], [mm], [ss]: elapsed time
				tm = true
			}
			i += j
			continue
		}
		switch c | 0x20 {
		case 'y', 'd', 'e', 'g':
			if c|0x20 == 'e' && i+1 < len(code) && (code[i+1] == '+' || code[i+1] == '-') {
				continue // 0.00E+00: scientific, not a year
			}
			if c|0x20 == 'g' && strings.HasPrefix(strings.ToLower(code[i:]), "general") {
				i += len("general") - 1
				continue
			}
			date = true
		case 'h', 's':
			tm = true
		case 'm':
			month = true
		}
	}
	switch {
	case date && tm:
		return kindDateTime
	case date, month && !tm:
		return kindDate
	case tm:
		return kindTime
	}
	return kindNumber
}

// excelDate is serial, a number of days, as an ISO 8601 date, date-time or
// time of day. In the 1900 system day 1 is 1900-01-01 and day 60 the
// 1900-02-29 that Lotus 1-2-3 counted and Excel kept (it is shown as it
// is: no such date exists); in the 1904 system day 0 is 1904-01-01.
// ok=false for a number no date format shows (negative, or past
// 9999-12-31): Excel shows ####, and the number is kept.
func excelDate(serial float64, date1904 bool, kind numKind) (string, bool) {
	const msPerDay = 86400000
	if math.IsNaN(serial) || serial < 0 || serial >= 2958466 {
		return "", false
	}
	total := int64(math.Round(serial * msPerDay))
	days, ms := total/msPerDay, total%msPerDay
	clock := time.UnixMilli(ms).UTC()
	clockText := clock.Format("15:04:05.999")
	if kind == kindTime {
		return clockText, true
	}
	var day string
	switch {
	case date1904:
		day = time.Date(1904, 1, 1, 0, 0, 0, 0, time.UTC).AddDate(0, 0, int(days)).Format(time.DateOnly)
	case days == 60:
		day = "1900-02-29"
	case days < 60:
		day = time.Date(1899, 12, 31, 0, 0, 0, 0, time.UTC).AddDate(0, 0, int(days)).Format(time.DateOnly)
	default:
		day = time.Date(1899, 12, 30, 0, 0, 0, 0, time.UTC).AddDate(0, 0, int(days)).Format(time.DateOnly)
	}
	if kind == kindDate {
		return day, true
	}
	return day + "T" + clockText, true
}

// excelDigits is how many significant digits Excel keeps of a number.
const excelDigits = 15

// generalNumber is a number as Excel's General format shows it, without
// the float noise of its stored form (0.1, not 0.1000000000000000055):
// an integer up to 15 digits as its digits (an id, 20676798568, never
// 2.0676798568E+10); another number to Excel's 15 significant digits.
// An integer of 16 digits or more cannot be what was typed: Excel keeps
// 15 digits and zeroes the rest (a 19-digit Zoho id), so it is shown as
// Excel shows it, in scientific notation (9.91214E+15), which the
// importer's check of ids and links (canon.MangledID) fails as an id the
// spreadsheet rewrote.
func generalNumber(v float64) string {
	switch {
	case v == 0:
		return "0"
	case math.IsInf(v, 0) || math.IsNaN(v):
		return "" // no cell holds one
	case v == math.Trunc(v) && math.Abs(v) < 1e15:
		return strconv.FormatFloat(v, 'f', -1, 64)
	case v == math.Trunc(v):
		return strings.ToUpper(strconv.FormatFloat(v, 'g', 6, 64))
	}
	return strings.ToUpper(strconv.FormatFloat(v, 'g', excelDigits, 64))
}
