package reader

import (
	"bytes"
	"encoding/binary"
	"errors"
	"io"
	"strings"
	"unicode/utf16"
)

// A file named .xlsx that is no zip but a compound file (MS-CFB, "OLE2";
// its first 8 bytes D0 CF 11 E0 A1 B1 1A E1) is one of two things a
// consultant is handed: a password-protected workbook, which Office writes
// as a compound file whose EncryptedPackage stream holds the encrypted
// .xlsx (beside EncryptionInfo), or an Excel 97–2003 workbook (.xls, a
// Workbook or Book stream) renamed. Each needs its own remedy, and only
// the names in the file's directory tell them apart: compoundKind reads
// them, following the directory's chain of sectors through the file
// allocation table, every step bounded by the file's size.

// cfbMagic starts every compound file.
var cfbMagic = []byte("\xd0\xcf\x11\xe0\xa1\xb1\x1a\xe1")

// What a compound file holds, as far as reading a workbook goes.
type compound int

const (
	compoundUnread    compound = iota // its directory cannot be read
	compoundEncrypted                 // a password-protected workbook (or document)
	compoundXLS                       // an Excel 97–2003 workbook
	compoundOther                     // an Office 97–2003 document of another kind
)

// Sector numbers that are no sector (MS-CFB 2.1).
const (
	cfbMaxRegular = 0xFFFFFFFA
	cfbEndOfChain = 0xFFFFFFFE
)

// maxCFBNames bounds the directory entries read.
const maxCFBNames = 1 << 16

var errCFB = errors.New("not a compound file as MS-CFB describes it")

// compoundKind tells what the compound file of size bytes that ra holds
// is, by the names in its directory.
func compoundKind(ra io.ReaderAt, size int64) compound {
	names, err := compoundNames(ra, size)
	if err != nil {
		return compoundUnread
	}
	has := func(want ...string) bool {
		for _, n := range names {
			for _, w := range want {
				if strings.EqualFold(n, w) { // MS-CFB compares names without case
					return true
				}
			}
		}
		return false
	}
	switch {
	case has("EncryptedPackage", "EncryptionInfo"):
		return compoundEncrypted
	case has("Workbook", "Book"):
		return compoundXLS
	}
	return compoundOther
}

// compoundNames lists the names of the storages and streams in a compound
// file's directory.
func compoundNames(ra io.ReaderAt, size int64) ([]string, error) {
	var h [512]byte
	if _, err := ra.ReadAt(h[:], 0); err != nil || !bytes.HasPrefix(h[:], cfbMagic) {
		return nil, errCFB
	}
	le := binary.LittleEndian
	shift := le.Uint16(h[30:])
	if shift != 9 && shift != 12 { // 512-byte sectors (version 3), 4,096 (version 4)
		return nil, errCFB
	}
	ss := int64(1) << shift
	sectors := size/ss - 1 // the header takes the first sector's room
	if sectors < 1 {
		return nil, errCFB
	}
	f := &cfbFile{ra: ra, ss: ss, sectors: sectors, perSector: ss / 4}
	if err := f.readFAT(&h); err != nil {
		return nil, err
	}
	return f.directory(le.Uint32(h[48:]))
}

// cfbFile is a compound file being read: its sectors, and where its FAT's
// sectors are.
type cfbFile struct {
	ra        io.ReaderAt
	ss        int64    // the sector size
	sectors   int64    // how many the file's size holds
	perSector int64    // FAT entries per sector
	fat       []uint32 // the FAT's sectors
}

// read reads p from sector n, at bytes into it.
func (f *cfbFile) read(n uint32, p []byte, at int64) error {
	if int64(n) >= f.sectors {
		return errCFB
	}
	_, err := f.ra.ReadAt(p, (int64(n)+1)*f.ss+at)
	return err
}

// readFAT finds where the FAT's sectors are: the first 109 in the header
// h, the rest in a chain of DIFAT sectors, each ending with the next one's
// number.
func (f *cfbFile) readFAT(h *[512]byte) error {
	le := binary.LittleEndian
	numFAT := int64(le.Uint32(h[44:]))
	if numFAT > f.sectors {
		return errCFB
	}
	for i := 0; i < 109 && int64(len(f.fat)) < numFAT; i++ {
		f.fat = append(f.fat, le.Uint32(h[76+4*i:]))
	}
	buf := make([]byte, f.ss)
	for next, steps := le.Uint32(h[68:]), int64(0); int64(len(f.fat)) < numFAT; steps++ {
		if next > cfbMaxRegular || steps > f.sectors {
			return errCFB
		}
		if err := f.read(next, buf, 0); err != nil {
			return errCFB
		}
		for i := int64(0); i < f.perSector-1 && int64(len(f.fat)) < numFAT; i++ {
			f.fat = append(f.fat, le.Uint32(buf[4*i:]))
		}
		next = le.Uint32(buf[f.ss-4:])
	}
	return nil
}

// follow is the sector after n in its chain, as the FAT says.
func (f *cfbFile) follow(n uint32) (uint32, error) {
	i := int64(n) / f.perSector
	if i >= int64(len(f.fat)) {
		return 0, errCFB
	}
	var b [4]byte
	if err := f.read(f.fat[i], b[:], int64(n)%f.perSector*4); err != nil {
		return 0, errCFB
	}
	return binary.LittleEndian.Uint32(b[:]), nil
}

// directory reads the names in the directory, a chain of sectors of
// 128-byte entries from sector n.
func (f *cfbFile) directory(n uint32) ([]string, error) {
	le := binary.LittleEndian
	buf := make([]byte, f.ss)
	var names []string
	for steps := int64(0); n != cfbEndOfChain; steps++ {
		if n > cfbMaxRegular || steps > f.sectors {
			return nil, errCFB
		}
		if err := f.read(n, buf, 0); err != nil {
			return nil, errCFB
		}
		for e := buf; len(e) >= 128; e = e[128:] {
			length, typ := int(le.Uint16(e[64:])), e[66]
			if typ != 1 && typ != 2 && typ != 5 || length < 2 || length > 64 || length%2 != 0 {
				continue // unused, or not a storage, a stream or the root
			}
			units := make([]uint16, length/2-1)
			for i := range units {
				units[i] = le.Uint16(e[2*i:])
			}
			names = append(names, string(utf16.Decode(units)))
			if len(names) > maxCFBNames {
				return nil, errCFB
			}
		}
		var err error
		if n, err = f.follow(n); err != nil {
			return nil, err
		}
	}
	return names, nil
}
