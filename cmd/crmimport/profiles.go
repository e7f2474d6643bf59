package main

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strings"

	"github.com/urfave/cli/v2"

	"crmimport/importer/profile"
	"crmimport/importer/suggest"
	"crmimport/runs"
)

func (a *app) profilesCommand() *cli.Command {
	return &cli.Command{
		Name:  "profiles",
		Usage: "list the built-in source profiles, print one, or check a profile file of your own",
		Description: `A profile says which files of an export hold which kind and which column
gives which field (SPEC §4). The built-in ones are canonical (crmimport's own
layout), salesforce, hubspot and pipedrive; run --profile picks one by name,
or reads a profile file (YAML or JSON) for a CRM nobody shipped. Start from a
built-in one: print it, edit it, check it, use it.

A file may feed several kinds (an Odoo lead export: contacts and their
notes), each its own task over it; a file pattern's where takes only some
rows ({file: "res.partner*.csv", where: {is_company: true}}). profiles check
says which rows each kind takes and which patterns several kinds share.

Examples:
   crmimport profiles
   crmimport profiles show salesforce
   crmimport profiles show canonical > zoho.yaml
   crmimport profiles check zoho.yaml
   crmimport profiles suggest ./zoho-export --out zoho.yaml
   crmimport run --tenant acme --source zoho --profile zoho.yaml ./zoho-export`,
		Action: a.profilesList,
		Subcommands: []*cli.Command{
			{
				Name:      "show",
				Usage:     "print a profile (a built-in name or a file) as written, comments included",
				ArgsUsage: "NAME|FILE",
				Action:    a.profilesShow,
			},
			{
				Name:      "check",
				Usage:     "read a profile file and say what is wrong with it, or what it reads",
				ArgsUsage: "FILE",
				Action:    a.profilesCheck,
			},
			{
				Name:      "suggest",
				Usage:     "draft a profile for an export no built-in profile fits, each guess commented",
				ArgsUsage: "PATH...",
				Description: `Reads the export's files (a folder, a zip, .gz or single files), their
headers and first rows, and drafts a profile: a kind per file (from its name
and headers), a field per column (from the header, the built-in profiles'
spellings and the look of the values), the id column, links (columns whose
values are ids or names of another file's records), the date formats and the
spellings of empty and true/false seen. Each guess says why and how sure;
every column it could not place is listed (it goes to extra). Check the
draft, then run with it.

Examples:
   crmimport profiles suggest ./zoho-export
   crmimport profiles suggest ./zoho-export --source zoho --out zoho.yaml
   crmimport profiles suggest export.zip --out zoho.yaml --force
   crmimport --json profiles suggest ./zoho-export
   crmimport profiles check zoho.yaml
   crmimport run --tenant acme --source zoho --profile zoho.yaml ./zoho-export`,
				Flags: []cli.Flag{
					&cli.StringFlag{Name: "source", Usage: "the draft profile's name (default: from the export's folder or file name)"},
					&cli.StringFlag{Name: "out", Usage: "write the draft to `FILE` (default: print it)"},
					&cli.BoolFlag{Name: "force", Usage: "with --out, replace an existing file"},
				},
				Action: a.profilesSuggest,
			},
		},
	}
}

// profileInfo is a profile as `profiles --json` lists it.
type profileInfo struct {
	Name        string              `json:"name"`
	Description string              `json:"description"`
	BuiltIn     bool                `json:"built_in"`
	Kinds       map[string][]string `json:"kinds"`
	// Shared are the file patterns several kinds share: a file they match
	// feeds each kind, a task per kind (SPEC §4).
	Shared []profile.SharedPattern `json:"shared"`
	// IDsFrom are, per kind whose id is made of columns (SPEC §4), those
	// columns: editing one of them in the CRM makes a new record.
	IDsFrom map[string][]string `json:"ids_from,omitempty"`
}

func describeProfile(p *profile.Profile) profileInfo {
	info := profileInfo{Name: p.Name, Description: p.Description, BuiltIn: p.BuiltIn, Kinds: map[string][]string{},
		Shared: p.SharedPatterns()}
	for _, k := range p.Kinds() {
		info.Kinds[string(k)] = p.FilePatterns(k)
		if from := p.IDFrom(k); from != nil {
			if info.IDsFrom == nil {
				info.IDsFrom = map[string][]string{}
			}
			info.IDsFrom[string(k)] = from
		}
	}
	if info.Shared == nil {
		info.Shared = []profile.SharedPattern{}
	}
	return info
}

// writeProfile says what a profile reads: per kind its file patterns, and
// which rows of them a where takes; then the patterns several kinds share.
func (a *app) writeProfile(info profileInfo, p *profile.Profile) {
	fmt.Fprintf(a.stdout, "%s — %s\n", info.Name, info.Description)
	for _, k := range p.Kinds() {
		fmt.Fprintf(a.stdout, "    %-10s %s\n", k.Plural(), strings.Join(p.FilesDescribed(k), ", "))
		if from := p.IDFrom(k); from != nil {
			fmt.Fprintf(a.stdout, "    %-10s id made of %s: a record whose %s is edited in the CRM is a new record to crmimport "+
				"(the old one is no longer in the export, and stays imported); a run's summary pairs the records "+
				"no longer in the export with the new ones that look like them\n", "", andList(from), orWords(from))
		}
	}
	for _, sp := range info.Shared {
		names := make([]string, len(sp.Kinds))
		for i, k := range sp.Kinds {
			names[i] = k.Plural()
		}
		how := "a column one of them maps stays out of the others' extra"
		if sp.Split {
			how = "a row goes to each kind whose where takes it; a row no kind takes is counted in a warning, " +
				"and a flag that cannot be read fails its row once"
		}
		fmt.Fprintf(a.stdout, "  %s feeds %s: each kind is its own task over the file; %s\n", sp.Pattern, andList(names), how)
	}
}

// orWords joins words with commas and a final "or".
func orWords(words []string) string {
	if len(words) < 2 {
		return strings.Join(words, "")
	}
	return strings.Join(words[:len(words)-1], ", ") + " or " + words[len(words)-1]
}

// andList joins words with commas and a final "and".
func andList(words []string) string {
	if len(words) < 2 {
		return strings.Join(words, "")
	}
	return strings.Join(words[:len(words)-1], ", ") + " and " + words[len(words)-1]
}

func (a *app) profilesList(c *cli.Context) error {
	if c.NArg() > 0 {
		return usagef("unknown profiles command %q (show NAME, check FILE, or nothing to list them)", c.Args().First())
	}
	var infos []profileInfo
	for i, name := range profile.BuiltinNames() {
		p, err := runs.ProfileByName(name)
		if err != nil {
			return err
		}
		info := describeProfile(p)
		infos = append(infos, info)
		if !a.json {
			if i > 0 {
				fmt.Fprintln(a.stdout)
			}
			a.writeProfile(info, p)
		}
	}
	if a.json {
		return a.writeJSON(infos)
	}
	fmt.Fprintln(a.stdout, "\n`crmimport profiles show NAME` prints one: a starting point for a profile of your own (--profile FILE).")
	return nil
}

func (a *app) profilesShow(c *cli.Context) error {
	if c.NArg() != 1 {
		return usagef("profiles show takes one NAME (%s) or FILE", strings.Join(profile.BuiltinNames(), ", "))
	}
	p, err := runs.ResolveProfile(c.Args().First())
	if err != nil {
		return err
	}
	if a.json {
		return a.writeJSON(struct {
			profileInfo
			Text string `json:"text"`
		}{describeProfile(p), string(p.Text())})
	}
	_, err = a.stdout.Write(p.Text())
	return err
}

func (a *app) profilesCheck(c *cli.Context) error {
	if c.NArg() != 1 {
		return usagef("profiles check takes one FILE")
	}
	p, err := runs.ResolveProfile(c.Args().First())
	if err != nil {
		return err
	}
	info := describeProfile(p)
	if a.json {
		return a.writeJSON(info)
	}
	fmt.Fprintf(a.stdout, "%s: a valid profile\n", c.Args().First())
	a.writeProfile(info, p)
	return nil
}

var sourceNameRE = regexp.MustCompile(`[^a-z0-9_-]+`)

// draftName is a profile name from an export's path: its folder or file
// name, lower-cased, without extensions, other characters made "-".
func draftName(p string) string {
	base := strings.ToLower(filepath.Base(filepath.Clean(p)))
	for ext := filepath.Ext(base); ext != "" && len(ext) < len(base); ext = filepath.Ext(base) {
		base = strings.TrimSuffix(base, ext)
	}
	base = strings.Trim(sourceNameRE.ReplaceAllString(base, "-"), "-_")
	if base == "" || !profileNameStart(base) {
		return "custom"
	}
	return base
}

func profileNameStart(s string) bool { return s[0] >= 'a' && s[0] <= 'z' || s[0] >= '0' && s[0] <= '9' }

func (a *app) profilesSuggest(c *cli.Context) error {
	if c.NArg() == 0 {
		return usagef("profiles suggest takes the export's PATH (a folder, a zip, or its files), e.g. crmimport profiles suggest ./zoho-export --out zoho.yaml")
	}
	name := c.String("source")
	if name == "" {
		name = draftName(c.Args().First())
	} else if !regexp.MustCompile(`^[a-z0-9][a-z0-9_-]*$`).MatchString(name) {
		return usagef("--source %q is not a profile name: use lower-case letters, digits, - and _ (zoho, my-crm)", name)
	}
	out := c.String("out")
	if c.Bool("force") && out == "" {
		return usagef("--force replaces the file --out names: give --out FILE")
	}
	if out != "" && !c.Bool("force") {
		if _, err := os.Stat(out); err == nil {
			return usagef("%s exists: pass --force to replace it, or choose another --out FILE", out)
		} else if !errors.Is(err, fs.ErrNotExist) {
			return err
		}
	}
	d, err := suggest.Suggest(c.Context, c.Args().Slice(), suggest.Options{Name: name})
	if err != nil {
		return err
	}
	text := d.YAML()
	if out == "" {
		if a.json {
			return a.writeJSON(d)
		}
		_, err := a.stdout.Write(text)
		return err
	}
	if err := os.WriteFile(out, text, 0o644); err != nil {
		return fmt.Errorf("write the draft: %w", err)
	}
	if a.json {
		return a.writeJSON(d)
	}
	fmt.Fprintf(a.stdout, "wrote the draft profile %q to %s\n", d.Name, out)
	for _, f := range d.Files {
		placed, extra := 0, 0
		for _, col := range f.Columns {
			if col.Field != "" {
				placed++
			} else {
				extra++
			}
		}
		if f.Kind == "" {
			fmt.Fprintf(a.stdout, "    %-40s %s\n", f.Name, f.KindWhy)
			continue
		}
		fmt.Fprintf(a.stdout, "    %-40s %-8s %d %s placed, %d to extra\n", f.Name, f.Kind, placed, plural(placed, "column", "columns"), extra)
	}
	if err := d.Check(); err != nil {
		fmt.Fprintf(a.stdout, "\nto fix before a run:\n    %s\n", strings.ReplaceAll(err.Error(), "\n", "\n    "))
	}
	fmt.Fprintf(a.stdout, "\nnext: check the guesses marked likely and guess, then\n    crmimport profiles check %s\n    crmimport run --tenant T --source %s --profile %s %s\n",
		out, d.Name, out, strings.Join(c.Args().Slice(), " "))
	return nil
}

func plural(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}
