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
	all := append([]CFBEntry{{Name: "Root Entry", Storage: true, Parent: -1}}, entries...)
	l := cfbLayoutOf(len(all), v4, dirAt)
	out := make([]byte, l.ss*(1+l.total))
	l.header(out[:512])
	l.difat(out)
	l.fat(out)
	l.directory(out, all)
	return out
}

// cfbLayout is where the parts of a compound file lie: its sector size
// (1 << shift), its FAT sectors (from sector 0), the DIFAT sectors after
// them, and its directory from sector dirAt on, the last of total sectors.
type cfbLayout struct {
	v4                       bool
	shift, version           uint16
	ss, perSector            int // bytes and directory entries per sector
	dirAt, dirSectors, total int
	numFAT, numDIFAT         int
}

// cfbLayoutOf lays out a compound file of n directory entries.
func cfbLayoutOf(n int, v4 bool, dirAt int) cfbLayout {
	shift, version := uint16(9), uint16(3)
	if v4 {
		shift, version = 12, 4
	}
	ss := 1 << shift
	perSector := ss / 128
	dirSectors := (n + perSector - 1) / perSector
	total := dirAt + dirSectors
	numFAT := (total + ss/4 - 1) / (ss / 4)
	numDIFAT := 0
	if numFAT > 109 {
		numDIFAT = (numFAT - 109 + ss/4 - 2) / (ss/4 - 1)
	}
	if dirAt < numFAT+numDIFAT {
		panic("CompoundFileAt: the directory would overlap the FAT")
	}
	return cfbLayout{v4: v4, shift: shift, version: version, ss: ss, perSector: perSector, dirAt: dirAt,
		dirSectors: dirSectors, total: total, numFAT: numFAT, numDIFAT: numDIFAT}
}

// sector is sector n of out (the header is before sector 0).
func (l cfbLayout) sector(out []byte, n int) []byte { return out[(n+1)*l.ss : (n+2)*l.ss] }

// header writes the file's header into h: its signature, version, sector
// size, where its FAT, DIFAT and directory are, and no mini FAT.
func (l cfbLayout) header(h []byte) {
	copy(h, "\xd0\xcf\x11\xe0\xa1\xb1\x1a\xe1")
	le := binary.LittleEndian
	le.PutUint16(h[24:], 0x003E)
	le.PutUint16(h[26:], l.version)
	le.PutUint16(h[28:], 0xFFFE)
	le.PutUint16(h[30:], l.shift)
	le.PutUint16(h[32:], 6)
	if l.v4 {
		le.PutUint32(h[40:], uint32(l.dirSectors))
	}
	le.PutUint32(h[44:], uint32(l.numFAT))
	le.PutUint32(h[48:], uint32(l.dirAt))
	le.PutUint32(h[56:], 4096)
	le.PutUint32(h[60:], cfbEndOfChain) // no mini FAT
	le.PutUint32(h[68:], cfbEndOfChain)
	if l.numDIFAT > 0 {
		le.PutUint32(h[68:], uint32(l.numFAT))
	}
	le.PutUint32(h[72:], uint32(l.numDIFAT))
	for i := range 109 {
		le.PutUint32(h[76+4*i:], cfbFree)
		if i < l.numFAT {
			le.PutUint32(h[76+4*i:], uint32(i))
		}
	}
}

// difat writes the DIFAT sectors (numFAT on), which list the FAT sectors
// past the 109th, each ending with the next one's number.
func (l cfbLayout) difat(out []byte) {
	le, ss := binary.LittleEndian, l.ss
	for d := range l.numDIFAT {
		b := l.sector(out, l.numFAT+d)
		for i := range ss / 4 {
			le.PutUint32(b[4*i:], cfbFree)
		}
		for i := 0; i < ss/4-1; i++ {
			if f := 109 + d*(ss/4-1) + i; f < l.numFAT {
				le.PutUint32(b[4*i:], uint32(f))
			}
		}
		next := uint32(cfbEndOfChain)
		if d < l.numDIFAT-1 {
			next = uint32(l.numFAT + d + 1)
		}
		le.PutUint32(b[ss-4:], next)
	}
}

// fat writes the FAT: its own sectors and the DIFAT's marked, the
// directory's chained, every other sector free.
func (l cfbLayout) fat(out []byte) {
	le, ss := binary.LittleEndian, l.ss
	entry := func(n int, v uint32) { le.PutUint32(l.sector(out, n/(ss/4))[4*(n%(ss/4)):], v) }
	for n := range l.numFAT * (ss / 4) {
		entry(n, cfbFree)
	}
	for n := range l.numFAT {
		entry(n, cfbFATSector)
	}
	for d := range l.numDIFAT {
		entry(l.numFAT+d, cfbDIFATSect)
	}
	for n := l.dirAt; n < l.total; n++ {
		next := uint32(n + 1)
		if n == l.total-1 {
			next = cfbEndOfChain
		}
		entry(n, next)
	}
}

// directory writes the directory's entries, all (the root first), every
// stream empty; the sectors' entries past them are unused.
func (l cfbLayout) directory(out []byte, all []CFBEntry) {
	le := binary.LittleEndian
	child, right := cfbTree(all)
	dir := out[(l.dirAt+1)*l.ss:]
	for i := range l.dirSectors * l.perSector {
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
}

// cfbTree gives each storage of all its children, as a tree of names
// (shorter first, then by their upper case), kept as a chain of right
// siblings: each entry's first child and right sibling (cfbFree: none).
func cfbTree(all []CFBEntry) (child, right []uint32) {
	child = make([]uint32, len(all))
	right = make([]uint32, len(all))
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
	return child, right
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
