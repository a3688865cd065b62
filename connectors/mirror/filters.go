package mirror

// Config keys and Kafka 4.1 defaults of MM2's default filters.
const (
	TopicsConfig        = "topics"
	TopicsDefault       = ".*"
	TopicsExcludeConfig = "topics.exclude"
	// TopicsExcludeDefault is DefaultTopicFilter's code default in Kafka 4.1. Kafka 3.x and the operations
	// documentation show ".*[\-\.]internal, .*\.replica, __.*"; topics ending in .internal or -internal
	// are never replicated either way, because ReplicationPolicy.IsInternalTopic rejects them.
	TopicsExcludeDefault = `mm2.*\.internal, .*\.replica, __.*`

	GroupsConfig         = "groups"
	GroupsDefault        = ".*"
	GroupsExcludeConfig  = "groups.exclude"
	GroupsExcludeDefault = "console-consumer-.*, connect-.*, __.*"

	ConfigPropertiesExcludeConfig  = "config.properties.exclude"
	ConfigPropertiesExcludeDefault = `follower\.replication\.throttled\.replicas, ` +
		`leader\.replication\.throttled\.replicas, ` +
		`message\.timestamp\.difference\.max\.ms, ` +
		`message\.timestamp\.type, ` +
		`unclean\.leader\.election\.enable, ` +
		`min\.insync\.replicas`
	UseDefaultsFromConfig  = "use.defaults.from"
	UseDefaultsFromDefault = "target"
)

// TopicFilter is DefaultTopicFilter: a topic is accepted when it matches topics and not
// topics.exclude.
type TopicFilter struct {
	include, exclude patternList
}

// NewTopicFilter reads topics (default ".*") and topics.exclude (default [TopicsExcludeDefault]).
func NewTopicFilter(props map[string]string) (*TopicFilter, error) {
	include, exclude, err := includeExclude(props, TopicsConfig, TopicsDefault, TopicsExcludeConfig, TopicsExcludeDefault)
	if err != nil {
		return nil, err
	}
	return &TopicFilter{include: include, exclude: exclude}, nil
}

// Accepts reports whether topic passes the filter. A nil filter accepts nothing.
func (f *TopicFilter) Accepts(topic string) bool {
	return f != nil && f.include.matches(topic) && !f.exclude.matches(topic)
}

// GroupFilter is DefaultGroupFilter: a consumer group is accepted when it matches groups and not
// groups.exclude.
type GroupFilter struct {
	include, exclude patternList
}

// NewGroupFilter reads groups (default ".*") and groups.exclude (default [GroupsExcludeDefault]).
func NewGroupFilter(props map[string]string) (*GroupFilter, error) {
	include, exclude, err := includeExclude(props, GroupsConfig, GroupsDefault, GroupsExcludeConfig, GroupsExcludeDefault)
	if err != nil {
		return nil, err
	}
	return &GroupFilter{include: include, exclude: exclude}, nil
}

// Accepts reports whether group passes the filter. A nil filter accepts nothing.
func (f *GroupFilter) Accepts(group string) bool {
	return f != nil && f.include.matches(group) && !f.exclude.matches(group)
}

// ConfigPropertyFilter is DefaultConfigPropertyFilter: it decides which topic configs are synced to
// remote topics.
type ConfigPropertyFilter struct {
	exclude           patternList
	useSourceDefaults bool
}

// NewConfigPropertyFilter reads config.properties.exclude (default [ConfigPropertiesExcludeDefault])
// and use.defaults.from (default "target"; like Java, any value other than "source" means target).
func NewConfigPropertyFilter(props map[string]string) (*ConfigPropertyFilter, error) {
	exclude, err := listPatterns(props, ConfigPropertiesExcludeConfig, ConfigPropertiesExcludeDefault)
	if err != nil {
		return nil, err
	}
	from, ok := props[UseDefaultsFromConfig]
	if !ok {
		from = UseDefaultsFromDefault
	}
	return &ConfigPropertyFilter{exclude: exclude, useSourceDefaults: from == "source"}, nil
}

// ShouldReplicateConfigProperty reports whether the topic config name is synced at all.
func (f *ConfigPropertyFilter) ShouldReplicateConfigProperty(name string) bool {
	return !f.exclude.matches(name)
}

// ShouldReplicateSourceDefault reports whether a config that has its default value on the source is
// copied as an explicit value (use.defaults.from=source) rather than left to the target's default.
func (f *ConfigPropertyFilter) ShouldReplicateSourceDefault(string) bool {
	return f.useSourceDefaults
}

func includeExclude(props map[string]string, includeKey, includeDefault, excludeKey, excludeDefault string) (patternList, patternList, error) {
	include, err := listPatterns(props, includeKey, includeDefault)
	if err != nil {
		return patternList{}, patternList{}, err
	}
	exclude, err := listPatterns(props, excludeKey, excludeDefault)
	if err != nil {
		return patternList{}, patternList{}, err
	}
	return include, exclude, nil
}

// listPatterns compiles the LIST config key, using def only when the key is absent: a present but
// blank value is the empty list.
func listPatterns(props map[string]string, key, def string) (patternList, error) {
	value, ok := props[key]
	if !ok {
		value = def
	}
	return compilePatternList(key, ParseList(value))
}
