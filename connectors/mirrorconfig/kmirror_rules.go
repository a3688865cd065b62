package mirrorconfig

import (
	"fmt"
	"regexp"
	"slices"
	"strings"

	"github.com/kmirror/kmirror/connectors/configdef"
)

// Texts of the errors kmirror adds for settings a Java worker would accept but kmirror does
// not implement.
const (
	converterMessage  = "kmirror replicates records as raw bytes and supports only " + byteArrayConverterClass
	transformsMessage = "kmirror replicates records as raw bytes and does not run single message transforms (SMTs)"
	predicatesMessage = "kmirror does not run single message transforms (SMTs), so predicates cannot be used"

	unaddressableNameMessage = "a connector name cannot be \".\" or \"..\": clients resolve such a path segment " +
		"(/connectors/.. is /), so the connector could not be read, changed or deleted through the REST API"
)

// classRestriction limits a CLASS key to the implementations kmirror has.
type classRestriction struct {
	key     string
	allowed []string
	message string
}

func classRestrictions(p Plugin) []classRestriction {
	out := []classRestriction{
		{key: ReplicationPolicyClassConfig, allowed: []string{defaultReplicationPolicyClass, identityReplicationPolicyClass},
			message: "kmirror supports only " + defaultReplicationPolicyClass + " and " + identityReplicationPolicyClass +
				" (full or simple class name)"},
		{key: ForwardingAdminClassConfig, allowed: []string{forwardingAdminClass},
			message: "kmirror manages topics itself and supports only " + forwardingAdminClass},
	}
	switch p.Class {
	case SourceConnectorClass:
		out = append(out, onlyDefault(TopicFilterClassConfig, defaultTopicFilterClass),
			onlyDefault(ConfigPropertyFilterClassConfig, defaultConfigPropertyFilterClass))
	case CheckpointConnectorClass:
		out = append(out, onlyDefault(TopicFilterClassConfig, defaultTopicFilterClass),
			onlyDefault(GroupFilterClassConfig, defaultGroupFilterClass))
	}
	return out
}

// onlyDefault restricts key to MM2's default implementation class, the only one kmirror has.
func onlyDefault(key, class string) classRestriction {
	return classRestriction{key: key, allowed: []string{class}, message: "kmirror supports only " + class}
}

// patternKeys are the LIST keys the connector's filters compile into one regular expression.
// The checkpoint connector reads topics and topics.exclude through its topic filter even
// though it does not define them.
func patternKeys(p Plugin) []string {
	switch p.Class {
	case SourceConnectorClass:
		return []string{TopicsConfig, TopicsExcludeConfig, ConfigPropertiesExcludeConfig}
	case CheckpointConnectorClass:
		return []string{GroupsConfig, GroupsExcludeConfig, TopicsConfig, TopicsExcludeConfig}
	}
	return nil
}

// kmirrorRules adds errors for what kmirror does not implement.
func kmirrorRules(p Plugin, props map[string]*string, v *validation, w Worker) {
	kmirrorKeyRules(p, props, v)
	resolve := classResolver()
	for _, slot := range converterSlots() {
		class, ok := trimmed(props, slot.classKey)
		if !ok || class == "" {
			continue
		}
		canonical, _ := resolve(class)
		if canonical != byteArrayConverterClass {
			v.addError(slot.classKey, props[slot.classKey], configdef.NewConfigError(slot.classKey, class, converterMessage).Error())
			continue
		}
		// Connect's own check is lost when the connector's values replace the framework's;
		// kmirror reports it because it really cannot honour another version.
		req, err := versionRequirement(props[slot.versionKey])
		if err == nil && req != nil && !req.contains(Version) {
			msg := "Plugin " + byteArrayConverterClass + " not found that matches the version range " + req.String() +
				", available versions: [" + Version + "]"
			v.addError(slot.classKey, props[slot.classKey], msg)
			v.addError(slot.versionKey, props[slot.versionKey], msg)
		}
	}

	// Connect accepts these names, but no client can address them: URL libraries resolve the dot segments of
	// /connectors/.. (even percent-encoded) before sending, so a connector named ".." could never be deleted.
	if raw := props[NameConfig]; raw != nil && (*raw == "." || *raw == "..") {
		v.addError(NameConfig, raw, configdef.NewConfigError(NameConfig, *raw, unaddressableNameMessage).Error())
	}

	for _, r := range []struct{ name, msg string }{{TransformsConfig, transformsMessage}, {PredicatesConfig, predicatesMessage}} {
		if raw := props[r.name]; raw != nil {
			if aliases := configdef.SplitList(*raw); len(aliases) > 0 {
				v.addError(r.name, raw, configdef.NewConfigError(r.name, aliases, r.msg).Error())
			}
		}
	}

	if level, ok := trimmed(props, ExactlyOnceSupportConfig); ok && strings.EqualFold(level, "required") && !w.ExactlyOnceSource.Enabled() {
		v.ensureError(ExactlyOnceSupportConfig, props[ExactlyOnceSupportConfig], eosNotEnabledMessage)
	}
	for _, k := range transactionalIDKeys() {
		if id, ok := trimmed(props, k); ok && id != "" {
			v.addError(k, props[k], configdef.NewConfigError(k, id, transactionalIDMessage).Error())
		}
	}

	for _, r := range classRestrictions(p) {
		class, ok := trimmed(props, r.key)
		if !ok || class == "" {
			continue
		}
		if canonical, _ := resolve(class); !slices.Contains(r.allowed, canonical) {
			v.addError(r.key, props[r.key], configdef.NewConfigError(r.key, class, r.message).Error())
		}
	}

	for _, name := range patternKeys(p) {
		raw := props[name]
		if raw == nil {
			continue
		}
		if msg := patternListError(configdef.SplitList(*raw)); msg != "" {
			v.addError(name, raw, configdef.NewConfigError(name, strings.TrimSpace(*raw), msg).Error())
		}
	}
}

// patternListError compiles a filter list as kmirror's filters do, "^(?:a|b)$" with Go's RE2,
// and explains the first pattern that does not compile. Java's java.util.regex accepts some
// syntax RE2 does not (look-around, back-references, possessive quantifiers).
func patternListError(patterns []string) string {
	if len(patterns) == 0 {
		return ""
	}
	joined := "^(?:" + strings.Join(patterns, "|") + ")$"
	_, err := regexp.Compile(joined)
	if err == nil {
		return ""
	}
	for _, p := range patterns {
		if _, perr := regexp.Compile("^(?:" + p + ")$"); perr != nil {
			return fmt.Sprintf("pattern %q is not a regular expression kmirror can use (Go RE2 syntax: no look-around or back-references): %v", p, perr)
		}
	}
	return fmt.Sprintf("patterns joined as %q are not a regular expression kmirror can use (Go RE2 syntax): %v", joined, err)
}
