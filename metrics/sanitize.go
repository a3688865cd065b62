package metrics

import "strings"

// jmxSanitize is Kafka's Sanitizer.jmxSanitize, which JmxReporter applies to every tag value of an MBean name:
// a value made only of [A-Za-z0-9_-%. \t] is kept as it is, anything else is wrapped by ObjectName.quote (in
// double quotes, with '\', '"', '*' and '?' escaped by a backslash and a newline written as \n). The JMX
// exporter copies the quoted form into the label value, quotes included, and the Strimzi dashboard's regexes
// (clientid=~".*replication-consumer\"") depend on it, so the compat series carry it too.
func jmxSanitize(v string) string {
	if !needsQuote(v) {
		return v
	}
	var b strings.Builder
	b.Grow(len(v) + 2)
	b.WriteByte('"')
	for _, c := range v {
		switch c {
		case '\n':
			b.WriteString(`\n`)
			continue
		case '\\', '"', '*', '?':
			b.WriteByte('\\')
		}
		b.WriteRune(c)
	}
	b.WriteByte('"')
	return b.String()
}

// needsQuote reports whether v falls outside Java's [\w-%\. \t]* (\w being ASCII letters, digits and '_').
func needsQuote(v string) bool {
	for i := 0; i < len(v); i++ {
		c := v[i]
		switch {
		case 'a' <= c && c <= 'z', 'A' <= c && c <= 'Z', '0' <= c && c <= '9':
		case c == '_', c == '-', c == '%', c == '.', c == ' ', c == '\t':
		default:
			return true
		}
	}
	return false
}

// validLabel makes v valid UTF-8, which Prometheus requires of label values (an invalid one would fail the
// scrape): group ids and other names that come from Kafka are arbitrary bytes.
func validLabel(v string) string { return strings.ToValidUTF8(v, "\uFFFD") }

// fetchTopic is a topic as Kafka's consumer fetch metrics tag it (FetchMetricsManager.topicTags): '.' becomes
// '_'.
func fetchTopic(topic string) string { return strings.ReplaceAll(topic, ".", "_") }
