package mm2file

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"slices"
	"strings"

	"github.com/kmirror/kmirror/connectors/configdef"
)

// WriteJSON writes each connector as the body of POST /connectors ({"name":...,"config":{...}}), one indented
// JSON document after another.
func WriteJSON(w io.Writer, cs []Connector) error {
	for _, c := range cs {
		var buf bytes.Buffer
		enc := json.NewEncoder(&buf)
		enc.SetEscapeHTML(false)
		enc.SetIndent("", "  ")
		if err := enc.Encode(struct {
			Name   string            `json:"name"`
			Config map[string]string `json:"config"`
		}{c.Name, c.Config}); err != nil {
			return err
		}
		if _, err := w.Write(buf.Bytes()); err != nil {
			return err
		}
	}
	return nil
}

// WriteHCL writes each connector as a kafka-connect_connector resource of the Kafka Connect Terraform provider
// (Mongey/kafka-connect): passwords and JAAS configs go to config_sensitive, so plans do not show them.
func WriteHCL(w io.Writer, cs []Connector) error {
	var b strings.Builder
	for i, c := range cs {
		if i > 0 {
			b.WriteByte('\n')
		}
		fmt.Fprintf(&b, "resource \"kafka-connect_connector\" %s {\n  name = %s\n", hclString(resourceName(c.Name)), hclString(c.Name))
		plain, sensitive := map[string]string{}, map[string]string{}
		for k, v := range c.Config {
			if isSensitive(k) {
				sensitive[k] = v
			} else {
				plain[k] = v
			}
		}
		writeHCLMap(&b, "config", plain)
		if len(sensitive) > 0 {
			writeHCLMap(&b, "config_sensitive", sensitive)
		}
		b.WriteString("}\n")
	}
	_, err := io.WriteString(w, b.String())
	return err
}

func writeHCLMap(b *strings.Builder, attr string, m map[string]string) {
	fmt.Fprintf(b, "\n  %s = {\n", attr)
	for _, k := range slices.Sorted(maps.Keys(m)) {
		fmt.Fprintf(b, "    %s = %s\n", hclString(k), hclString(m[k]))
	}
	b.WriteString("  }\n")
}

// resourceName is a Terraform resource name for a connector name: "A->B.MirrorSourceConnector" becomes
// "A_to_B_MirrorSourceConnector".
func resourceName(name string) string {
	name = strings.ReplaceAll(name, flowSeparator, "_to_")
	var b strings.Builder
	for i, r := range name {
		ok := r == '_' || r == '-' || (r >= 'a' && r <= 'z') || (r >= 'A' && r <= 'Z') || (i > 0 && r >= '0' && r <= '9')
		if !ok {
			r = '_'
		}
		b.WriteRune(r)
	}
	return b.String()
}

// hclString quotes s as an HCL string literal; ${ and %{ are escaped, so config provider references stay
// literal instead of becoming Terraform interpolations.
func hclString(s string) string {
	var b strings.Builder
	b.WriteByte('"')
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c == '"':
			b.WriteString(`\"`)
		case c == '\\':
			b.WriteString(`\\`)
		case c == '\n':
			b.WriteString(`\n`)
		case c == '\r':
			b.WriteString(`\r`)
		case c == '\t':
			b.WriteString(`\t`)
		case (c == '$' || c == '%') && i+1 < len(s) && s[i+1] == '{':
			b.WriteByte(c)
			b.WriteByte(c)
		case c < 0x20:
			fmt.Fprintf(&b, `\u%04x`, c)
		default:
			b.WriteByte(c)
		}
	}
	b.WriteByte('"')
	return b.String()
}

// isSensitive says whether a connector key holds a secret: it ends in one of the client PASSWORD keys
// (source.cluster.ssl.key.password, target.producer.sasl.jaas.config, ...).
func isSensitive(key string) bool {
	for _, k := range securityKeys() {
		if k.Type == configdef.TypePassword && (key == k.Name || strings.HasSuffix(key, "."+k.Name)) {
			return true
		}
	}
	return false
}
