package importer

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"crmimport/canon"
	"crmimport/ledger"
)

// fixtureFiles are the files of fixtures/ that seed the fuzz targets (the
// hand-made exports and the bad-input corpus), with the profile each was
// made for ("" for the canonical and generated ones).
func fixtureFiles(tb testing.TB) map[string]string {
	tb.Helper()
	out := map[string]string{}
	root := filepath.Join("..", "fixtures")
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		if _, ok := formatOf(matchName(p)); !ok {
			return nil
		}
		if info, err := d.Info(); err != nil || info.Size() > 128<<10 {
			return err
		}
		rel, _ := filepath.Rel(root, p)
		parts := strings.Split(filepath.ToSlash(rel), "/")
		profile := "canonical"
		switch {
		case len(parts) > 2 && parts[0] == "bad":
			profile = parts[1]
		case len(parts) > 1 && parts[0] != "demo" && parts[0] != "gen":
			profile = parts[0]
		}
		out[p] = profile
		return nil
	})
	require.NoError(tb, err)
	require.NotEmpty(tb, out)
	return out
}

// addFixtureSeeds adds the fixture files of a format to a fuzz target.
// JSON takes JSON Lines files too (add is told which).
func addFixtureSeeds(f *testing.F, format Format, add func(data []byte, profile string, ff Format)) {
	for p, profile := range fixtureFiles(f) {
		ff, _ := formatOf(matchName(p))
		if ff != format && !(format == FormatJSON && ff == FormatJSONL) {
			continue
		}
		data, err := os.ReadFile(p)
		require.NoError(f, err)
		add(data, profile, ff)
	}
}

// FuzzMapRow: whatever the bytes and whichever profile and kind, reading
// and mapping rows (alternate columns, value rules, links, flattened JSON)
// and validating them ends, never panics, and gives records whose id is
// trimmed, whose line is known, whose extra and raw row are JSON, and whose
// link values name a link field or the column they came from.
func FuzzMapRow(f *testing.F) {
	profiles := BuiltinProfiles()
	index := map[string]uint8{}
	for i, n := range profiles {
		index[n] = uint8(i)
	}
	addFixtureSeeds(f, FormatCSV, func(data []byte, profile string, _ Format) { f.Add(data, index[profile], uint8(0), false) })
	addFixtureSeeds(f, FormatJSON, func(data []byte, profile string, _ Format) { f.Add(data, index[profile], uint8(1), true) })
	f.Add([]byte("Record ID,Associated Company IDs,Associated Company IDs (Primary)\n1, ;;2 ; ,\n"), index["hubspot"], uint8(1), false)
	f.Add([]byte(`{"results":[{"id":"1","properties":{"a":{"b":[1,{"c":null}]}},"associations":{"companies":{"results":[{"id":7},"x",{}]}}}]}`),
		index["hubspot"], uint8(1), true)
	f.Add([]byte("\"Id\",\"WhoId\",\"WhatId\",\"AccountId\"\n\"00T\",\"003aaaaaaaaaaaa\",\"@\",\"000000000000000AAA\"\n"), index["salesforce"], uint8(4), false)

	f.Fuzz(func(t *testing.T, in []byte, profileIndex, kindIndex uint8, isJSON bool) {
		p, err := ProfileByName(profiles[int(profileIndex)%len(profiles)])
		require.NoError(t, err)
		kinds := p.Kinds()
		k := kinds[int(kindIndex)%len(kinds)]
		format := FormatCSV
		if isJSON {
			format = FormatJSON
		}
		rr, err := NewRowReader(bytes.NewReader(in), ReadOptions{Name: "fuzz", Format: format})
		if err != nil {
			var fe *FileError
			require.ErrorAs(t, err, &fe)
			return
		}
		// The file's name picks the kind's first file pattern: its where,
		// defaults and joins apply.
		name := strings.ReplaceAll(p.FilePatterns(k)[0], "*", "x")
		m := newMapper(p, k, name)
		m.aux = &auxData{names: map[*linkSpec]*nameIndex{}, joins: map[*joinSpec]*joinIndex{}}
		for _, ls := range m.ks.links {
			if ls.byName {
				m.aux.names[ls] = &nameIndex{refs: map[string][]nameRef{"Harbor Logistics": {{id: "2"}, {id: "3"}}, "Acme": {{id: "1"}}}}
			}
		}
		for _, js := range m.fs.joins {
			m.aux.joins[js] = &joinIndex{rows: map[string][]linkValue{"1": {{field: "contact_id", id: "9", shown: "9"}}}}
		}
		_ = m.checkHeader(rr.Header())
		for range len(in) + 2 {
			row, err := rr.Next()
			if err != nil {
				if !errors.Is(err, io.EOF) {
					var fe *FileError
					require.ErrorAs(t, err, &fe)
				}
				return
			}
			r := m.mapRow(row)
			require.Equal(t, strings.TrimSpace(r.ID), r.ID)
			require.Positive(t, r.Line)
			require.Len(t, r.vals, len(canon.Fields(k)))
			require.True(t, json.Valid([]byte(r.RawJSON())), r.RawJSON())
			for _, l := range r.links() {
				_, isField := canon.KindOfLinkField(l.field)
				require.True(t, isField || l.field == l.label, "link value %+v", l)
				if isField {
					lk, _ := canon.KindOfLinkField(l.field)
					require.True(t, canon.IsParent(k, lk), "%s links to %s", k, lk)
				}
			}
			if r.notRecord {
				continue
			}
			m.prepare(&r)
			if r.extraJSON != "" {
				require.True(t, json.Valid([]byte(r.extraJSON)), r.extraJSON)
			}
			require.True(t, r.invalid != "" || r.values.Valid())
			if r.Kind != ledger.Kind(k) {
				t.Fatalf("kind %s, want %s", r.Kind, k)
			}
		}
		t.Fatal("reading does not end")
	})
}
