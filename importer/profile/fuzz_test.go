package profile

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"crmimport/canon"
	"crmimport/importer/reader"
	"crmimport/importer/reader/readertest"
	"crmimport/ledger"
)

// FuzzMapRow: whatever the bytes and whichever profile and kind, reading
// and mapping rows (alternate columns, value rules, links, flattened JSON)
// and validating them ends, never panics, and gives records whose id is
// trimmed, whose line is known, whose extra and raw row are JSON, and whose
// link values name a link field or the column they came from.
func FuzzMapRow(f *testing.F) {
	profiles := BuiltinNames()
	index := map[string]uint8{}
	for i, n := range profiles {
		index[n] = uint8(i)
	}
	readertest.FixtureSeeds(f, reader.FormatCSV, func(data []byte, profile string, _ reader.Format) { f.Add(data, index[profile], uint8(0), false) })
	readertest.FixtureSeeds(f, reader.FormatJSON, func(data []byte, profile string, _ reader.Format) { f.Add(data, index[profile], uint8(1), true) })
	f.Add([]byte("Record ID,Associated Company IDs,Associated Company IDs (Primary)\n1, ;;2 ; ,\n"), index["hubspot"], uint8(1), false)
	f.Add([]byte(`{"results":[{"id":"1","properties":{"a":{"b":[1,{"c":null}]}},"associations":{"companies":{"results":[{"id":7},"x",{}]}}}]}`),
		index["hubspot"], uint8(1), true)
	f.Add([]byte("\"Id\",\"WhoId\",\"WhatId\",\"AccountId\"\n\"00T\",\"003aaaaaaaaaaaa\",\"@\",\"000000000000000AAA\"\n"), index["salesforce"], uint8(4), false)

	f.Fuzz(func(t *testing.T, in []byte, profileIndex, kindIndex uint8, isJSON bool) {
		p, err := Builtin(profiles[int(profileIndex)%len(profiles)])
		require.NoError(t, err)
		kinds := p.Kinds()
		k := kinds[int(kindIndex)%len(kinds)]
		format := reader.FormatCSV
		if isJSON {
			format = reader.FormatJSON
		}
		rr, err := reader.NewRowReader(bytes.NewReader(in), reader.ReadOptions{Name: "fuzz", Format: format})
		if err != nil {
			var fe *reader.FileError
			require.ErrorAs(t, err, &fe)
			return
		}
		// The file's name picks the kind's first file pattern: its where,
		// defaults and joins apply.
		name := strings.ReplaceAll(p.FilePatterns(k)[0], "*", "x")
		m := NewMapper(p, k, name)
		m.side = &sideFiles{names: map[*linkSpec]*nameIndex{}, joins: map[*joinSpec]*joinIndex{}}
		for _, ls := range m.kindSpec.links {
			if ls.byName {
				m.side.names[ls] = &nameIndex{refs: map[string][]nameRef{"Harbor Logistics": {{id: "2"}, {id: "3"}}, "Acme": {{id: "1"}}}}
			}
		}
		for _, js := range m.fileSpec.joins {
			m.side.joins[js] = &joinIndex{rows: map[string][]LinkValue{"1": {{Field: "contact_id", ID: "9", Shown: "9"}}}}
		}
		_ = m.CheckHeader(rr.Header())
		for range len(in) + 2 {
			row, err := rr.Next()
			if err != nil {
				if !errors.Is(err, io.EOF) {
					var fe *reader.FileError
					require.ErrorAs(t, err, &fe)
				}
				return
			}
			r := m.Map(row)
			require.Equal(t, strings.TrimSpace(r.ID), r.ID)
			require.Positive(t, r.Line)
			require.Len(t, r.vals, len(canon.Fields(k)))
			require.True(t, json.Valid([]byte(r.RawJSON())), r.RawJSON())
			for _, l := range r.Links() {
				_, isField := canon.KindOfLinkField(l.Field)
				require.True(t, isField || l.Field == l.Label, "link value %+v", l)
				if isField {
					lk, _ := canon.KindOfLinkField(l.Field)
					require.True(t, canon.IsParent(k, lk), "%s links to %s", k, lk)
				}
			}
			if r.Excluded {
				continue
			}
			m.Complete(&r)
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
