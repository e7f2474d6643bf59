package main

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/chromedp/chromedp"
	"github.com/stretchr/testify/require"
)

// dropFiles drops files (name → content) onto the New import page's drop
// zone, as a user's drag and drop does.
func dropFiles(name, content string) string {
	return fmt.Sprintf(`(() => { const dt = new DataTransfer();
		dt.items.add(new File([%q], %q, { type: "text/csv" }));
		return document.getElementById("drop").dispatchEvent(new DragEvent("drop", { dataTransfer: dt, bubbles: true, cancelable: true })); })()`,
		content, name)
}

// TestUploadsInABrowser: issue 23 item 23 — New import lists the drops kept
// in the uploads folder, each with its files, size and the runs that read
// it; a drop shows in the list at once; a refused drop keeps nothing and
// says so; Delete asks once more, then deletes the drop from the list and
// from the disk; Use makes a kept drop the path.
func TestUploadsInABrowser(t *testing.T) {
	t.Parallel()
	out := shots(t)
	path := filepath.Join(t.TempDir(), "crm.db")
	s := serve(t, path)
	ctx := browser(t)
	folder := path + ".uploads"
	kept := func() []string {
		entries, err := os.ReadDir(folder)
		if os.IsNotExist(err) {
			return nil
		}
		require.NoError(t, err)
		var names []string
		for _, e := range entries {
			names = append(names, e.Name())
		}
		return names
	}

	do(ctx, t, chromedp.Navigate(s.URL()), chromedp.WaitVisible(chromedp.CSS("h1")),
		chromedp.Navigate("http://"+s.Addr()+"/import"), chromedp.WaitVisible(chromedp.CSS("#uploads")))
	waitText(ctx, t, "#uploads-body", "No dropped files are kept")

	_, err := chromedp.Run(ctx, chromedp.Evaluate[bool](dropFiles("contacts.csv", "id,first_name\nc-1,Ann\n")))
	require.NoError(t, err)
	waitJS(ctx, t, `document.querySelectorAll("table.uploads tbody tr").length === 1`, "the first drop listed")
	_, err = chromedp.Run(ctx, chromedp.Evaluate[bool](dropFiles("notes.csv", "id,body\nn-1,Hello\n")))
	require.NoError(t, err)
	waitJS(ctx, t, `document.querySelectorAll("table.uploads tbody tr").length === 2`, "the second drop listed")
	require.Len(t, kept(), 2)
	second, err := chromedp.Run(ctx, chromedp.Value(chromedp.CSS("#path")))
	require.NoError(t, err)
	require.Equal(t, folder, filepath.Dir(second), "the drop's folder became the path")
	require.Contains(t, kept(), filepath.Base(second))
	first := kept()[0]
	if first == filepath.Base(second) {
		first = kept()[1]
	}

	_, err = chromedp.Run(ctx, chromedp.Evaluate[bool](dropFiles(".hidden.csv", "x\n")))
	require.NoError(t, err)
	waitText(ctx, t, "#import-message", "nothing of this drop was kept")
	require.Len(t, kept(), 2, "a refused drop keeps nothing")

	row := fmt.Sprintf(`tr[data-upload=%q]`, first)
	require.Contains(t, textOf(ctx, t, row), "contacts.csv")
	require.Contains(t, textOf(ctx, t, row), "no run")
	del := row + " button[data-delete]"
	do(ctx, t, click(del))
	waitText(ctx, t, "#uploads-message", "Click again to delete")
	require.Len(t, kept(), 2, "one click deletes nothing")
	shoot(ctx, t, out, "30-import-uploads")
	do(ctx, t, click(del))
	waitText(ctx, t, "#uploads-message", "Deleted 1 file")
	waitJS(ctx, t, `document.querySelectorAll("table.uploads tbody tr").length === 1`, "the deleted drop gone from the list")
	require.Equal(t, []string{filepath.Base(second)}, kept(), "the deleted drop is gone from the disk")

	_, err = chromedp.Run(ctx, chromedp.Evaluate[bool](`(() => { document.getElementById("path").value = ""; return true; })()`))
	require.NoError(t, err)
	do(ctx, t, click(fmt.Sprintf(`tr[data-upload=%q] button[data-use]`, filepath.Base(second))))
	value, err := chromedp.Run(ctx, chromedp.Value(chromedp.CSS("#path")))
	require.NoError(t, err)
	require.Equal(t, second, value, "Use makes the kept drop the path")
	shoot(ctx, t, out, "31-import-uploads-after-delete")
}
