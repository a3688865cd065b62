package main

import (
	"context"
	"flag"
	"io"

	"github.com/peterbourgon/ff/v3"
	"github.com/peterbourgon/ff/v3/ffcli"
)

// newFlagSet is a command's flags: a parse error is returned (and explained on stderr), never an exit.
func newFlagSet(name string, stderr io.Writer) *flag.FlagSet {
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	fs.SetOutput(stderr)
	return fs
}

// envCommand is a command whose flags may also be set by KMIRROR_* variables (envOption).
func envCommand(fs *flag.FlagSet, name, usage, help string, exec func(context.Context, []string) error) *ffcli.Command {
	return &ffcli.Command{Name: name, ShortUsage: usage, ShortHelp: help, FlagSet: fs, Options: []ff.Option{envOption}, Exec: exec}
}
