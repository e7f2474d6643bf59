package main

import (
	"strings"

	"crmimport/canon"

	"github.com/urfave/cli/v2"
)

// normaliseArgs lets flags stand before or after positional arguments, and
// global flags after the command name. urfave/cli v2 stops parsing flags at
// the first positional argument, which would otherwise ignore them
// silently; this puts global flags first and a command's flags before its
// arguments. "--" ends the flags.
func normaliseArgs(app *cli.App, args []string) ([]string, error) {
	if len(args) < 2 {
		return args, nil
	}
	global := valueFlags(app.Flags)
	delete(global, "help") // --help is the command's, wherever it stands (see below)
	delete(global, "h")
	var globals, rest []string
	for i := 1; i < len(args); i++ {
		a := args[i]
		if a == "--" {
			rest = append(rest, args[i:]...)
			break
		}
		name, inline, ok := flagName(a)
		if takes, known := global[name]; ok && known {
			globals = append(globals, a)
			if takes && !inline && i+1 < len(args) {
				i++
				globals = append(globals, args[i])
			}
			continue
		}
		rest = append(rest, a)
	}
	out := append([]string{args[0]}, globals...)
	if len(rest) == 0 {
		return out, nil
	}
	// The command is the first word that is not a flag.
	ci := -1
	for i, a := range rest {
		if a == "--" {
			break
		}
		if _, _, ok := flagName(a); !ok {
			ci = i
			break
		}
	}
	if ci < 0 {
		return append(out, rest...), nil
	}
	cmd := app.Command(rest[ci])
	if cmd == nil {
		if rest[ci] == "help" {
			return append(out, rest...), nil
		}
		return nil, usagef("unknown command %q: see `crmimport --help`", rest[ci])
	}
	// --help before the command asks for the command's help: it goes after
	// the command's name, where urfave/cli sets the command up first (a
	// command's subcommands are listed only then).
	var helps []string
	for _, a := range rest[:ci] {
		if name, _, _ := flagName(a); name == "help" || name == "h" {
			helps = append(helps, a)
			continue
		}
		out = append(out, a)
	}
	words := append([]string(nil), rest[ci:]...)
	end := len(words)
	for i, w := range words {
		if w == "--" {
			end = i
			break
		}
	}
	words = append(words[:end], append(helps, words[end:]...)...)
	return append(out, commandArgs(cmd, words)...), nil
}

// commandArgs orders one command's words: name, flags, then arguments.
func commandArgs(cmd *cli.Command, words []string) []string {
	if len(cmd.Subcommands) > 0 {
		if out, ok := subcommandArgs(cmd, words); ok {
			return out
		}
	}
	specs := valueFlags(cmd.Flags)
	var flags, pos []string
	for i := 1; i < len(words); i++ {
		a := words[i]
		if a == "--" {
			pos = append(pos, words[i:]...)
			break
		}
		name, inline, ok := flagName(a)
		if !ok {
			pos = append(pos, a)
			continue
		}
		flags = append(flags, a)
		if specs[name] && !inline && i+1 < len(words) {
			i++
			flags = append(flags, words[i])
		}
	}
	return append(append([]string{words[0]}, flags...), pos...)
}

// subcommandArgs orders a command with subcommands (ledger load, ledger
// why): its name, its own flags, then the subcommand's words ordered by
// the subcommand's flags. The subcommand is the first word that names one;
// the command's own flags are those before it (--help after it is the
// subcommand's), and flags it does not know, wherever they stand, are the
// subcommand's (their values too: they are ordered once the subcommand is
// known). ok=false when no word names a subcommand.
func subcommandArgs(cmd *cli.Command, words []string) (out []string, ok bool) {
	own := valueFlags(cmd.Flags)
	var mine, rest []string
	sub := ""
	for i := 1; i < len(words); i++ {
		a := words[i]
		if a == "--" {
			rest = append(rest, words[i:]...)
			break
		}
		name, inline, isFlag := flagName(a)
		if takes, known := own[name]; isFlag && known && sub == "" {
			mine = append(mine, a)
			if takes && !inline && i+1 < len(words) {
				i++
				mine = append(mine, words[i])
			}
			continue
		}
		if !isFlag && sub == "" && cmd.Command(a) != nil {
			sub = a
			continue
		}
		rest = append(rest, a)
	}
	if sub == "" {
		return nil, false
	}
	out = append([]string{words[0]}, mine...)
	return append(out, commandArgs(cmd.Command(sub), append([]string{sub}, rest...))...), true
}

// flagName reads "--name", "-n", "--name=value"; ok=false for a word that
// is not a flag (including "-" alone).
func flagName(a string) (name string, inline, ok bool) {
	if len(a) < 2 || a[0] != '-' {
		return "", false, false
	}
	n := strings.TrimLeft(a, "-")
	if n == "" {
		return "", false, false
	}
	if i := strings.IndexByte(n, '='); i >= 0 {
		return n[:i], true, true
	}
	return n, false, true
}

// valueFlags maps every name of every flag to whether it takes a value.
func valueFlags(flags []cli.Flag) map[string]bool {
	m := map[string]bool{"help": false, "h": false}
	for _, f := range flags {
		_, isBool := f.(*cli.BoolFlag)
		if g, ok := f.(*cli.GenericFlag); ok {
			if b, ok := g.Value.(interface{ IsBoolFlag() bool }); ok && b.IsBoolFlag() {
				isBool = true // given alone, or with its value after "="
			}
		}
		for _, n := range f.Names() {
			m[n] = !isBool
		}
	}
	return m
}

// pluralKinds is what --only takes, from the table of kinds in plan order:
// "companies,contacts,deals,…".
func pluralKinds() string {
	var words []string
	for _, k := range canon.Kinds() {
		words = append(words, k.Plural())
	}
	return strings.Join(words, ",")
}
