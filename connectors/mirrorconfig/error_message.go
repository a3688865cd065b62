package mirrorconfig

import (
	"strconv"
	"strings"

	"github.com/kmirror/kmirror/connectors/configdef"
)

// ErrorMessage renders the message of Connect's 400 response to a create or update with an
// invalid config (AbstractHerder.maybeAddConfigErrors): a header with the error count, every
// error on its own line in the order of infos.Configs, and a pointer to the validate endpoint.
// It returns "" when infos has no errors.
func ErrorMessage(infos configdef.ConfigInfos) string {
	if infos.ErrorCount <= 0 {
		return ""
	}
	var b strings.Builder
	b.WriteString("Connector configuration is invalid and contains the following ")
	b.WriteString(strconv.Itoa(infos.ErrorCount))
	b.WriteString(" error(s):")
	for _, c := range infos.Configs {
		if c.Value == nil {
			continue
		}
		for _, msg := range c.Value.Errors {
			b.WriteByte('\n')
			b.WriteString(msg)
		}
	}
	b.WriteString("\nYou can also find the above list of errors at the endpoint `/connector-plugins/{connectorType}/config/validate`")
	return b.String()
}
