package readertest

import (
	"encoding/binary"
	"sort"
	"strings"
	"unicode/utf16"
)

// A compound file (MS-CFB, "OLE2") is what Excel 97–2003 saves (.xls: a
// stream named Workbook) and what Office writes a password-protected
// workbook as, an .xlsx too (the encrypted package beside the
// EncryptionInfo stream). CompoundFile writes one whose directory holds
// the entries given, every stream empty: what tells such files apart is
// the names in the directory, and nothing here needs their contents.

// CFBEntry is one entry of a compound file's directory: a storage (a
// folder) or a stream, in the storage Parent names (an index into the
// entries; 0, the root, for the top).
type CFBEntry struct {
	Name    string
	Storage bool
	Parent  int
}

const (
	cfbFree       = 0xFFFFFFFF // FREESECT, and NOSTREAM in the directory
	cfbEndOfChain = 0xFFFFFFFE
	cfbFATSector  = 0xFFFFFFFD
	cfbDIFATSect  = 0xFFFFFFFC
)

// CompoundFile writes a compound file of version 3 (512-byte sectors)
// or, with v4, of version 4 (4,096-byte sectors) holding a root entry and
// entries: its FAT, then its directory.
func CompoundFile(entries []CFBEntry, v4 bool) []byte { return CompoundFileAt(entries, v4, 1) }

// CompoundFileAt is CompoundFile with the directory from sector dirAt on,
// the sectors before it free but for the FAT's (from sector 0) and, in a
// file of more than 109 FAT sectors, the DIFAT's that list the others.
func CompoundFileAt(entries []CFBEntry, v4 bool, dirAt int) []byte {
	shift, version := uint16(9), uint16(3)
	if v4 {
		shift, version = 12, 4
	}
	ss := 1 << shift
	all := append([]CFBEntry{{Name: "Root Entry", Storage: true, Parent: -1}}, entries...)
	perSector := ss / 128
	dirSectors := (len(all) + perSector - 1) / perSector
	total := dirAt + dirSectors
	numFAT := (total + ss/4 - 1) / (ss / 4)
	numDIFAT := 0
	if numFAT > 109 {
		numDIFAT = (numFAT - 109 + ss/4 - 2) / (ss/4 - 1)
	}
	if dirAt < numFAT+numDIFAT {
		panic("CompoundFileAt: the directory would overlap the FAT")
	}

	out := make([]byte, ss*(1+total))
	h := out[:512]
	copy(h, "\xd0\xcf\x11\xe0\xa1\xb1\x1a\xe1")
	le := binary.LittleEndian
	le.PutUint16(h[24:], 0x003E)
	le.PutUint16(h[26:], version)
	le.PutUint16(h[28:], 0xFFFE)
	le.PutUint16(h[30:], shift)
	le.PutUint16(h[32:], 6)
	if v4 {
		le.PutUint32(h[40:], uint32(dirSectors))
	}
	le.PutUint32(h[44:], uint32(numFAT))
	le.PutUint32(h[48:], uint32(dirAt))
	le.PutUint32(h[56:], 4096)
	le.PutUint32(h[60:], cfbEndOfChain) // no mini FAT
	le.PutUint32(h[68:], cfbEndOfChain)
	if numDIFAT > 0 {
		le.PutUint32(h[68:], uint32(numFAT))
	}
	le.PutUint32(h[72:], uint32(numDIFAT))
	for i := range 109 {
		le.PutUint32(h[76+4*i:], cfbFree)
		if i < numFAT {
			le.PutUint32(h[76+4*i:], uint32(i))
		}
	}

	sector := func(n int) []byte { return out[(n+1)*ss : (n+2)*ss] }
	// The DIFAT sectors (numFAT on) list the FAT sectors past the 109th,
	// each ending with the next one's number.
	for d := range numDIFAT {
		b := sector(numFAT + d)
		for i := range ss / 4 {
			le.PutUint32(b[4*i:], cfbFree)
		}
		for i := 0; i < ss/4-1; i++ {
			if f := 109 + d*(ss/4-1) + i; f < numFAT {
				le.PutUint32(b[4*i:], uint32(f))
			}
		}
		next := uint32(cfbEndOfChain)
		if d < numDIFAT-1 {
			next = uint32(numFAT + d + 1)
		}
		le.PutUint32(b[ss-4:], next)
	}
	entry := func(n int, v uint32) { le.PutUint32(sector(n / (ss / 4))[4*(n%(ss/4)):], v) }
	for n := range numFAT * (ss / 4) {
		entry(n, cfbFree)
	}
	for n := range numFAT {
		entry(n, cfbFATSector)
	}
	for d := range numDIFAT {
		entry(numFAT+d, cfbDIFATSect)
	}
	for n := dirAt; n < total; n++ {
		next := uint32(n + 1)
		if n == total-1 {
			next = cfbEndOfChain
		}
		entry(n, next)
	}

	// Each storage's children, as a tree of names (shorter first, then
	// by their upper case), kept as a chain of right siblings.
	child := make([]uint32, len(all))
	right := make([]uint32, len(all))
	for i := range all {
		child[i], right[i] = cfbFree, cfbFree
	}
	for p := range all {
		var kids []int
		for i, e := range all {
			if i > 0 && e.Parent == p {
				kids = append(kids, i)
			}
		}
		sort.Slice(kids, func(a, b int) bool {
			na, nb := utf16.Encode([]rune(all[kids[a]].Name)), utf16.Encode([]rune(all[kids[b]].Name))
			if len(na) != len(nb) {
				return len(na) < len(nb)
			}
			return strings.ToUpper(all[kids[a]].Name) < strings.ToUpper(all[kids[b]].Name)
		})
		for k, i := range kids {
			if k == 0 {
				child[p] = uint32(i)
			} else {
				right[kids[k-1]] = uint32(i)
			}
		}
	}
	dir := out[(dirAt+1)*ss:]
	for i := range dirSectors * perSector {
		e := dir[128*i : 128*(i+1)]
		le.PutUint32(e[68:], cfbFree)
		le.PutUint32(e[72:], cfbFree)
		le.PutUint32(e[76:], cfbFree)
		if i >= len(all) {
			continue
		}
		name := utf16.Encode([]rune(all[i].Name))
		for j, u := range name {
			le.PutUint16(e[2*j:], u)
		}
		le.PutUint16(e[64:], uint16(2*(len(name)+1)))
		switch {
		case i == 0:
			e[66] = 5 // the root
		case all[i].Storage:
			e[66] = 1
		default:
			e[66] = 2
		}
		e[67] = 1 // black
		le.PutUint32(e[72:], right[i])
		le.PutUint32(e[76:], child[i])
		le.PutUint32(e[116:], cfbEndOfChain) // empty: no sector
	}
	return out
}

// EncryptedWorkbook is a password-protected .xlsx as Office writes it: the
// data spaces that say how it is encrypted, EncryptionInfo, and the
// encrypted package.
func EncryptedWorkbook() []byte {
	return CompoundFile([]CFBEntry{
		{Name: "\x06DataSpaces", Storage: true},
		{Name: "Version", Parent: 1},
		{Name: "DataSpaceMap", Parent: 1},
		{Name: "DataSpaceInfo", Storage: true, Parent: 1},
		{Name: "StrongEncryptionDataSpace", Parent: 4},
		{Name: "TransformInfo", Storage: true, Parent: 1},
		{Name: "StrongEncryptionTransform", Storage: true, Parent: 6},
		{Name: "\x06Primary", Parent: 7},
		{Name: "EncryptionInfo"},
		{Name: "EncryptedPackage"},
	}, false)
}

// XLSWorkbook is an Excel 97–2003 workbook (.xls): its Workbook stream
// and the summaries Excel writes beside it.
func XLSWorkbook(v4 bool) []byte {
	return CompoundFile([]CFBEntry{
		{Name: "Workbook"},
		{Name: "\x05SummaryInformation"},
		{Name: "\x05DocumentSummaryInformation"},
	}, v4)
}
