package main

import (
	"fmt"
	"strings"

	"github.com/urfave/cli/v2"

	"crmimport/importer"
	"crmimport/importer/profile"
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

Examples:
   crmimport profiles
   crmimport profiles show salesforce
   crmimport profiles show canonical > zoho.yaml
   crmimport profiles check zoho.yaml
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
		},
	}
}

// profileInfo is a profile as `profiles --json` lists it.
type profileInfo struct {
	Name        string              `json:"name"`
	Description string              `json:"description"`
	BuiltIn     bool                `json:"built_in"`
	Kinds       map[string][]string `json:"kinds"`
}

func describeProfile(p *profile.Profile) profileInfo {
	info := profileInfo{Name: p.Name, Description: p.Description, BuiltIn: p.BuiltIn, Kinds: map[string][]string{}}
	for _, k := range p.Kinds() {
		info.Kinds[string(k)] = p.FilePatterns(k)
	}
	return info
}

func (a *app) writeProfile(info profileInfo, p *profile.Profile) {
	fmt.Fprintf(a.stdout, "%s — %s\n", info.Name, info.Description)
	for _, k := range p.Kinds() {
		fmt.Fprintf(a.stdout, "    %-10s %s\n", k.Plural(), strings.Join(info.Kinds[string(k)], ", "))
	}
}

func (a *app) profilesList(c *cli.Context) error {
	if c.NArg() > 0 {
		return usagef("unknown profiles command %q (show NAME, check FILE, or nothing to list them)", c.Args().First())
	}
	var infos []profileInfo
	for i, name := range profile.BuiltinNames() {
		p, err := importer.ProfileByName(name)
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
	p, err := importer.ResolveProfile(c.Args().First())
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
	p, err := importer.ResolveProfile(c.Args().First())
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
