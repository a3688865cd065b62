// Package configprovider resolves Kafka Connect's config provider references (KIP-297, KIP-421) in client
// settings: ${env:VAR} (EnvVarConfigProvider, KIP-887), ${file:/path/to/file.properties:key}
// (FileConfigProvider) and ${directory:/path/to/dir:file} (DirectoryConfigProvider), each limited by an
// allowlist as KIP-993 limits Connect's (allowed.paths, allowlist.pattern).
//
// # Where references are resolved
//
// A connector config is stored, and returned by every GET, as written: with its references, never their
// values. This is Connect's model, and what keeps a Terraform provider that reads a config back free of
// diffs. A reference is resolved only when a connector or task builds a Kafka client, so the secret lives in
// kmirror's memory and librdkafka's, not in PostgreSQL, the REST API or the task configs the leader stores;
// a changed file or variable is picked up when the task restarts. Validation (POST, PUT, PATCH and
// /validate) checks a reference's syntax, that its provider is enabled, that its path is allowed and that
// an environment variable's name passes the allowlist, but reads nothing, so a config cannot learn through
// validation what a file holds or whether it or a variable exists.
//
// # Where kmirror differs from Connect
//
//   - Connect leaves a reference it cannot resolve (unknown provider, missing key, path not allowed) in the
//     value, so the client receives the literal "${file:...}" and fails later in some unrelated way.
//     kmirror refuses it: at validation when the provider is not enabled or the path not allowed, and at
//     client creation with an error naming the connector key and the provider, which fails the task.
//   - Connect configures allowed.paths per provider; kmirror has one list for the file and the directory
//     providers (--config-provider-allowed-paths), and requires it when either is enabled, since an empty
//     allowed.paths means any file at all.
//   - Paths are checked after resolving symbolic links (see package fileaccess); AllowedPaths only
//     normalises them.
//   - The env provider never reads kmirror's own settings (KMIRROR_*), whatever --config-provider-env-allowlist
//     says: the database URL and its password are among them.
//   - References are resolved in client settings only (the keys MM2 passes to Kafka clients). A reference
//     elsewhere is refused at validation.
//
// Error messages name the provider, the path and the key of a reference, never a resolved value.
package configprovider
