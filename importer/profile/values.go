package profile

// What a profile does to a value before it is judged: spellings of empty,
// multi-values, value maps, ids, flags and date formats, composed once per
// field and file.

import (
	"strings"
	"time"

	"crmimport/canon"
	"crmimport/ledger"
)

// valueFunc turns a value as read into the canonical spelling a profile
// says it has (an 18-character id, "true", an ISO date); keep reports that
// the value as read holds more than the field takes (other values of a
// multi-value column), so that it is also kept in extra.
type valueFunc func(v string) (out string, keep bool)

// valueFunc composes what the profile does to the values of field f, or
// nil when it does nothing (the canonical profile).
func (m *Mapper) valueFunc(f string) valueFunc {
	p := m.p
	spec := m.kindSpec.fields[f]
	var steps []valueFunc
	if len(p.empty) > 0 {
		empty := p.empty
		steps = append(steps, func(v string) (string, bool) {
			if empty[strings.TrimSpace(v)] {
				return "", false
			}
			return v, false
		})
	}
	if spec != nil && spec.multi != "" {
		sep := spec.multi
		steps = append(steps, func(v string) (string, bool) {
			first, _, found := strings.Cut(v, sep)
			if !found {
				return v, false
			}
			return strings.TrimSpace(first), true
		})
	}
	if spec != nil && len(spec.valueMap) > 0 {
		vm := spec.valueMap
		steps = append(steps, func(v string) (string, bool) {
			if to, ok := vm[strings.ToLower(strings.TrimSpace(v))]; ok {
				return to, false
			}
			return v, false
		})
	}
	if p.ids == idsSalesforce && (f == "id" || strings.HasSuffix(f, "_id")) {
		steps = append(steps, func(v string) (string, bool) { return salesforceID(v), false })
	}
	if (f == "deleted" || f == "done") && (len(p.trueWords) > 0 || len(p.falseWords) > 0) {
		tw, fw := p.trueWords, p.falseWords
		steps = append(steps, func(v string) (string, bool) {
			w := strings.ToLower(strings.TrimSpace(v))
			switch {
			case tw[w]:
				return "true", false
			case fw[w]:
				return "false", false
			}
			return v, false
		})
	}
	if formats := dateFormatsOf(p, spec); canon.IsDateField(f) && len(formats) > 0 {
		steps = append(steps, func(v string) (string, bool) { return profileDate(formats, v), false })
	}
	switch len(steps) {
	case 0:
		return nil
	case 1:
		return steps[0]
	}
	return func(v string) (string, bool) {
		keep := false
		for _, s := range steps {
			var k bool
			v, k = s(v)
			keep = keep || k
		}
		return v, keep
	}
}

// dateFormatsOf are the date formats a field's values are read in: its
// own, then the profile's.
func dateFormatsOf(p *Profile, spec *fieldSpec) []dateFormat {
	if spec == nil || len(spec.dates) == 0 {
		return p.dates
	}
	return append(append([]dateFormat(nil), spec.dates...), p.dates...)
}

// DateProblem says why v, a value of kind k's date field, is not a date
// the profile reads (its field's formats, the profile's, ISO 8601), as
// validation would say it, or "": what profiles check and the mapping
// editor say of a column before a run fails its rows.
func (p *Profile) DateProblem(k ledger.Kind, field, v string) string {
	if emptySpelling(v) || p.empty[strings.TrimSpace(v)] {
		return "" // no value
	}
	var spec *fieldSpec
	if ks := p.kinds[k]; ks != nil {
		spec = ks.fields[field]
	}
	if formats := dateFormatsOf(p, spec); len(formats) > 0 {
		v = profileDate(formats, v)
	}
	return canon.ValueProblem(k, field, v)
}

// dateOnly is the date a value of a column that holds dates gives (a
// profile's date_only), whatever its time: Salesforce writes its dates as
// "2018-08-22 00:00:00", and a real org's CloseDate also holds
// "2017-04-28 14:01:59". A value that is no date is left for validation
// to judge.
func dateOnly(v string) string {
	if d, ok := canon.DateOf(v); ok {
		return d
	}
	return v
}

// profileDate writes a date in one of a profile's formats as ISO 8601; a
// value that is ISO already, or in none of the formats, is left for
// validation to judge.
func profileDate(formats []dateFormat, v string) string {
	s := strings.TrimSpace(v)
	if s == "" {
		return v
	}
	if _, ok := canon.ParseDate(s); ok {
		return v
	}
	for _, f := range formats {
		t, err := time.Parse(f.layout, s)
		if err != nil {
			continue
		}
		if f.hasTime {
			return t.Format("2006-01-02T15:04:05")
		}
		return t.Format("2006-01-02")
	}
	return v
}

// ReformatDate writes v, a date in the format spec (as a profile writes
// one: DD/MM/YYYY, M/D/YY h:mm A), as ISO 8601, as a run with that format
// reads it (profileDate): the review grid's bulk date format (package
// grid). ok is false for a value that is not in that format; a spec that
// no profile accepts is an error, in the loader's words.
func ReformatDate(spec, v string) (iso string, ok bool, err error) {
	layout, hasTime, err := dateLayout(strings.TrimSpace(spec))
	if err != nil {
		return "", false, err
	}
	s := strings.TrimSpace(v)
	if s == "" {
		return v, false, nil
	}
	out := profileDate([]dateFormat{{spec: spec, layout: layout, hasTime: hasTime}}, s)
	if out == s {
		return v, false, nil // ISO already, or not in the format
	}
	return out, true, nil
}
