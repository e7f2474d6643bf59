package main

import (
	"strings"

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
	out = append(out, rest[:ci]...)
	return append(out, commandArgs(cmd, rest[ci:])...), nil
}

// commandArgs orders one command's words: name, flags, then arguments.
func commandArgs(cmd *cli.Command, words []string) []string {
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
	if len(cmd.Subcommands) > 0 && len(pos) > 0 {
		if sub := cmd.Command(pos[0]); sub != nil {
			return append(append([]string{words[0]}, flags...), commandArgs(sub, pos)...)
		}
	}
	return append(append([]string{words[0]}, flags...), pos...)
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
		for _, n := range f.Names() {
			m[n] = !isBool
		}
	}
	return m
}
