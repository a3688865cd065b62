package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"strings"

	"github.com/peterbourgon/ff/v3/ffcli"

	"github.com/kmirror/kmirror/connectors/clientconfig"
	"github.com/kmirror/kmirror/server"
	"github.com/kmirror/kmirror/store"
)

// registerSecretsFlags adds --secrets-key and --secrets-key-previous and returns the function that loads the
// keys once the flags are parsed.
func registerSecretsFlags(fs *flag.FlagSet) func() (*store.Secrets, error) {
	current := fs.String("secrets-key", "", "file holding a 32-byte key (base64 or hex) that encrypts connector config secrets (PASSWORD-type values) in PostgreSQL with AES-256-GCM; default: stored as given (KMIRROR_SECRETS_KEY)")
	previous := fs.String("secrets-key-previous", "", "comma-separated key files that still decrypt values written before a key rotation (KMIRROR_SECRETS_KEY_PREVIOUS)")
	return func() (*store.Secrets, error) { return server.LoadSecrets(*current, clientconfig.CommaList(*previous)) }
}

// newSecretsCommand is `kmirror secrets rotate`: re-encrypt every stored secret with the current key.
//
// Rotation is a command the operator runs, not something each worker does as it starts: workers restarted
// one by one with a new key would otherwise re-encrypt values that workers still on the old key then cannot
// read. Once every worker runs with --secrets-key NEW --secrets-key-previous OLD, one rotate makes OLD
// unnecessary.
func newSecretsCommand(stdout, stderr io.Writer) *ffcli.Command {
	fs := newFlagSet("kmirror secrets rotate", stderr)
	var g globals
	g.register(fs)
	loadSecrets := registerSecretsFlags(fs)
	rotate := envCommand(fs, "rotate", "kmirror secrets rotate --secrets-key NEW [--secrets-key-previous OLD] [flags]",
		"re-encrypt every stored connector secret with --secrets-key (and encrypt those stored in clear)", func(ctx context.Context, args []string) error {
			if len(args) > 0 {
				return fmt.Errorf("unexpected argument %q (see kmirror secrets rotate -h)", args[0])
			}
			secrets, err := loadSecrets()
			if err != nil {
				return err
			}
			if secrets == nil {
				return errors.New("missing --secrets-key: the key to encrypt with")
			}
			loggers, err := g.loggers(stderr)
			if err != nil {
				return err
			}
			st, err := store.Open(ctx, g.databaseURL, loggers.Logger("kmirror.store"), store.OpenOptions{Secrets: secrets, IsSecret: clientconfig.IsSecret})
			if err != nil {
				return err
			}
			defer st.Close()
			if err := st.CheckSecrets(ctx); err != nil {
				return err
			}
			n, err := st.RotateSecrets(ctx)
			if err != nil {
				return fmt.Errorf("rotate: %w", err)
			}
			fmt.Fprintf(stdout, "re-encrypted %d stored config(s) with key %s\n", n, secrets.Current.ID())
			return nil
		})
	return &ffcli.Command{
		Name:        "secrets",
		ShortUsage:  "kmirror secrets rotate [flags]",
		ShortHelp:   "manage the encryption of connector config secrets at rest",
		Subcommands: []*ffcli.Command{rotate},
		Exec: func(_ context.Context, args []string) error {
			if len(args) > 0 {
				return fmt.Errorf("unknown subcommand %q: use secrets rotate", strings.Join(args, " "))
			}
			return errors.New("missing subcommand: use secrets rotate")
		},
	}
}
