package main

import (
	"github.com/urfave/cli/v2"

	"crmimport/importer/runopts"
)

// updateFlag is --update: given alone it applies changes at the source
// (R17); --update=overwrite writes over hand edits too. A flag that may
// stand alone is a boolean flag to the flag package (IsBoolFlag), which
// then hands it "true", or the value after "=".
type updateFlag struct{ mode string }

func (u *updateFlag) Set(s string) error {
	m, err := runopts.ParseUpdate(s)
	if err != nil {
		return err
	}
	u.mode = m
	return nil
}

func (u *updateFlag) String() string {
	if u == nil {
		return ""
	}
	return u.mode
}

func (u *updateFlag) IsBoolFlag() bool { return true }

// updateOf is the mode --update gave ("" when not given).
func updateOf(c *cli.Context) string {
	if u, ok := c.Generic("update").(*updateFlag); ok {
		return u.mode
	}
	return ""
}
