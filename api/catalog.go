package api

import (
	"sync"

	"github.com/kmirror/kmirror/connectors/mirrorconfig"
)

// catalog answers plugin lookups. mirrorconfig builds every plugin's config definition on each call (about
// 0.1 ms), which GET /connectors?expand=info would otherwise pay once per connector on every dashboard poll;
// the catalog resolves each name once. Definitions are read-only once built, so sharing them is safe.
type catalog struct {
	mu     sync.Mutex
	byName map[string]lookup
}

type lookup struct {
	plugin mirrorconfig.Plugin
	ok     bool
}

// maxCachedLookups bounds the cache: names come from requests, and an endless stream of unknown class names
// must not grow it without limit.
const maxCachedLookups = 256

// lookup is mirrorconfig.LookupAnyPlugin, memoized: connectors and converters; callers that need a connector
// check the type (isConnector).
func (c *catalog) lookup(classOrAlias string) (mirrorconfig.Plugin, bool) {
	c.mu.Lock()
	l, hit := c.byName[classOrAlias]
	c.mu.Unlock()
	if hit {
		return l.plugin, l.ok
	}
	p, ok := mirrorconfig.LookupAnyPlugin(classOrAlias)
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.byName == nil {
		c.byName = map[string]lookup{}
	}
	if len(c.byName) < maxCachedLookups {
		c.byName[classOrAlias] = lookup{plugin: p, ok: ok}
	}
	return p, ok
}
