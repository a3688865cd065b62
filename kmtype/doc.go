// Package kmtype holds the types the runtime (tasks), the store and the connectors share: source offsets and
// offset-map ranges, partition and pipeline stats, notices, group offset translations, and the fenced sentinel.
// It imports nothing of kmirror, so every layer can use it without importing another.
package kmtype
