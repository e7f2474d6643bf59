// Package suggest drafts a profile for an export that no profile fits
// (issue 15 item 2; SPEC §9 "Profiles"): a kind per file, a canonical field
// per column, the id column, links, date formats and the spellings of
// empty and true/false, each guess with why and how sure. The draft is
// data the desktop's mapping editor changes and sends back (JSON), and
// YAML that profile.Load reads (`crmimport profiles suggest`).
package suggest

import (
	"context"

	"crmimport/importer/input"
	"crmimport/importer/reader"
	"crmimport/ledger"
)

// Options steer a suggestion.
type Options struct {
	// Name is the draft profile's name (default: "custom").
	Name string
	// Hide lists built-in profiles left out of the spellings the
	// suggestion learns from (a test hides the profile whose fixtures it
	// reads).
	Hide []string
	// SampleRows is how many rows of each file are read to judge the look
	// of the values (default 200).
	SampleRows int
	Limits     input.Limits
}

// Sureness is how sure a guess is.
type Sureness string

const (
	Sure   Sureness = "sure"   // an exact spelling of a profile, or an unmistakable name
	Likely Sureness = "likely" // a close spelling, confirmed by the values
	Guess  Sureness = "guess"  // from the values alone, or a weak name
)

// Draft is a suggested profile: what Suggest found, and what the editor
// changed since. It round-trips through JSON unchanged.
type Draft struct {
	Name  string  `json:"name"`
	Files []*File `json:"files"`
	// IDs is how the export's ids are read: "salesforce" when its files
	// hold Salesforce ids (15-character ids made 18, 000000000000000AAA
	// empty), or "" for plain.
	IDs string `json:"ids,omitempty"`
	// Empty and True/False are the spellings of empty and of true/false
	// seen in the values beyond the ones every profile knows.
	Empty []string `json:"empty,omitempty"`
	True  []string `json:"true,omitempty"`
	False []string `json:"false,omitempty"`
	// Match are the natural keys that match existing records (R5: email,
	// domain), and MatchWhy why.
	Match    []string `json:"match,omitempty"`
	MatchWhy string   `json:"match_why,omitempty"`
}

// File is one file of the export and what the draft reads it as.
type File struct {
	// Ref names the file as the run's input refs do (input.Name): a
	// path, or a zip's entry "export.zip!contacts.csv".
	Ref  string `json:"ref"`
	Name string `json:"name"` // its base name, as profile file patterns match it
	// Sheet is the workbook's sheet the file stands for, when a workbook
	// has several sheets with a header: each is judged on its own.
	Sheet  string        `json:"sheet,omitempty"`
	Format reader.Format `json:"format"`
	// Kind is the kind the file holds, or "" when it is left out.
	Kind     ledger.Kind `json:"kind"`
	KindWhy  string      `json:"kind_why"`
	KindSure Sureness    `json:"kind_sure"`
	// Pattern is the file pattern the draft writes for the file (its
	// name, lower-cased, with dates and numbers made wildcards).
	Pattern string    `json:"pattern"`
	Columns []*Column `json:"columns"`
	// DateFormats are the date formats seen in the file's date columns
	// (profile spellings: DD.MM.YYYY), beyond ISO 8601.
	DateFormats []string `json:"date_formats,omitempty"`
}

// Column is one column of a file and the field the draft gives it.
type Column struct {
	Name string `json:"name"` // as in the header
	// Field is the canonical field of the file's kind ("id", "email",
	// "company_id" for a link), or "" for extra.
	Field string `json:"field"`
	// List is the separator of a link column holding several ids (";"),
	// "json" for a JSON array, or "".
	List string `json:"list,omitempty"`
	// Prefixes make a link column a link by id prefix (Salesforce's
	// WhatId: "001" company, "006" deal): the kind of each value's
	// parent; Field is then the link of the kind most values name.
	Prefixes map[string]ledger.Kind `json:"prefixes,omitempty"`
	// Multi is the separator of a column holding several values of its
	// field (Pipedrive's ", "-joined emails): the first gives the field.
	Multi string `json:"multi,omitempty"`
	// ByName: a link column whose values are the parent's name, looked
	// up among the export's records of that kind (List is then "").
	ByName bool     `json:"by_name,omitempty"`
	Why    string   `json:"why"`
	Sure   Sureness `json:"sure,omitempty"`
	// Question is what the draft cannot tell from the values and asks
	// (which order a column's dates are written in), and DateChoices the
	// date formats to choose from; the column is not placed until then.
	Question    string   `json:"question,omitempty"`
	DateChoices []string `json:"date_choices,omitempty"`
	// DateField is the date field the Question places the column in once
	// answered (close_date).
	DateField string `json:"date_field,omitempty"`
	// DateFormat is the format the column's dates are written in (a
	// profile's spelling: DD/MM/YYYY), found in its values or chosen in
	// the editor (the answer to its Question): the profile reads its
	// field in it before the profile's list of formats.
	DateFormat string `json:"date_format,omitempty"`
	// Map turns the column's own words into its field's values (a deal's
	// status: Gewonnen → won), as a profile field's map does; a word not
	// in it is read as it is.
	Map map[string]string `json:"map,omitempty"`
	// Samples are the first distinct non-empty values, for the editor,
	// and Values all of them when the rows read hold few (a status, a
	// type), for a value map.
	Samples []string `json:"samples,omitempty"`
	Values  []string `json:"values,omitempty"`
}

// Suggest reads an export's files and headers (the paths a run takes:
// folders, zips, files) and drafts a profile for them.
func Suggest(ctx context.Context, paths []string, opt Options) (*Draft, error) {
	return suggest(ctx, paths, opt)
}

// YAML is the draft as a profile file: every guess with a comment saying
// why and how sure, every column it could not place listed (it goes to
// extra). profile.Load reads it.
func (d *Draft) YAML() []byte {
	return writeYAML(d)
}

// Check says what is wrong with the draft as the editor changed it (a
// kind without an id column, a field given twice in a file), in words for
// the page, or nil.
func (d *Draft) Check() error {
	return check(d)
}
