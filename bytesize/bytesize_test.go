package bytesize

import (
	"testing"

	"github.com/stretchr/testify/require"
)

func TestFormat(t *testing.T) {
	for n, want := range map[int64]string{
		0:             "0 bytes",
		512:           "512 bytes",
		1023:          "1023 bytes",
		1024:          "1.0 KiB",
		1536:          "1.5 KiB",
		3565158:       "3.4 MiB",
		1<<20 - 1:     "1024.0 KiB",
		1 << 30:       "1.0 GiB",
		5<<30 + 1<<29: "5.5 GiB",
		2048 << 30:    "2048.0 GiB",
	} {
		require.Equal(t, want, Format(n), "%d bytes", n)
	}
}
