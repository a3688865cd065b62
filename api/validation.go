package api

import (
	"errors"
	"net/http"
	"slices"
	"strings"
	"unicode"

	"github.com/kmirror/kmirror/connectors/configdef"
	"github.com/kmirror/kmirror/connectors/mirrorconfig"
)

// validationError is a config that cannot even be validated: no connector.class, or an unknown one.
// exceptionClass is the Java exception Connect raises for it, which the validate endpoint shows.
type validationError struct {
	err            *httpError
	exceptionClass string
}

// validateConnectorConfig runs Connect's validation of a connector config (AbstractHerder.validateConnectorConfig)
// and returns the ConfigInfos. A config without connector.class or with an unknown class cannot be validated
// and gives a validationError.
func (s *server) validateConnectorConfig(cfg *props) (configdef.ConfigInfos, *validationError) {
	class, ok := cfg.get(connectorClassKey)
	if !ok {
		return configdef.ConfigInfos{}, &validationError{
			err:            errorf(http.StatusBadRequest, "Connector config %s contains no connector type", javaConfigString(cfg)),
			exceptionClass: "org.apache.kafka.connect.runtime.rest.errors.BadRequestException",
		}
	}
	p, ok := s.plugins.lookup(class)
	if !ok || !isConnector(p) {
		// Connect 4.1.1's validate endpoint shows this as a BadRequestException with 500 (and a create as a
		// ConnectException with 400); the request is wrong, not the server, so kmirror says 400 on both.
		return configdef.ConfigInfos{}, &validationError{
			err:            &httpError{Status: http.StatusBadRequest, Message: unknownConnectorClassMessage(class)},
			exceptionClass: "org.apache.kafka.connect.runtime.rest.errors.BadRequestException",
		}
	}
	isConnectorKey := mirrorconfig.ConfigDef(p).Has
	clientErrors := func(c map[string]string) map[string][]string { return s.Clients.Validate(c, isConnectorKey) }
	return mirrorconfig.ValidateOn(s.worker, p, cfg.values, clientErrors), nil
}

// unknownConnectorClassMessage is Plugins.connectorClass's message, listing every connector plugin with
// PluginDesc.toString, sorted by class name as Connect's plugin set is.
func unknownConnectorClassMessage(class string) string {
	plugins := mirrorconfig.Plugins()
	slices.SortStableFunc(plugins, func(a, b mirrorconfig.Plugin) int { return strings.Compare(a.Class, b.Class) })
	var descs []string
	for _, p := range plugins {
		if isConnector(p) {
			descs = append(descs, pluginDesc(p))
		}
	}
	return "Failed to find any class that implements Connector and which name matches " + class +
		", available connectors are: " + strings.Join(descs, ", ")
}

// pluginDesc is PluginDesc.toString for a plugin on Connect's classpath.
func pluginDesc(p mirrorconfig.Plugin) string {
	return "PluginDesc{klass=class " + p.Class + ", name='" + p.Class + "', version='" + p.Version +
		"', encodedVersion=" + p.Version + ", type=" + p.Type + ", typeName='" + p.Type + "', location='classpath'}"
}

// maxNameBytes bounds connector names and the stored form of an offsets partition. Both are primary keys, and
// PostgreSQL's btree index refuses entries of more than about 2.7 kB (both together, for the offsets table):
// past it the database fails the write with its own text, where the client should learn which field is too long.
// Connect sets no limit, but no name or partition of a real connector comes near it.
const maxNameBytes = 1024

// checkAndPutName is ConnectorsResource.checkAndPutConnectorConfigName: a name in the config must equal the
// connector's name exactly; a missing (or null) one is set to it.
func checkAndPutName(name string, cfg *props) error {
	if len(name) > maxNameBytes {
		return errorf(http.StatusBadRequest, "Connector name is %d bytes long; kmirror accepts names of at most %d bytes", len(name), maxNameBytes)
	}
	if err := checkNameChars(name); err != nil {
		return err
	}
	if included, ok := cfg.get(mirrorconfig.NameConfig); ok {
		if included != name {
			return errorf(http.StatusBadRequest, "Connector name configuration (%s) doesn't match connector name in the URL (%s)", included, name)
		}
		return nil
	}
	cfg.set(mirrorconfig.NameConfig, &name)
	return nil
}

// checkNameChars refuses a name holding an invisible formatting character (Unicode category Cf): bidi controls
// such as U+202E RIGHT-TO-LEFT OVERRIDE reorder what follows them, and zero-width ones (U+200B, U+200D, U+2060,
// U+FEFF) show as nothing, so either makes one connector's name look like another's on a page or in a log.
func checkNameChars(name string) error {
	for _, r := range name {
		if unicode.Is(unicode.Cf, r) {
			return errorf(http.StatusBadRequest, "Connector name holds U+%04X, an invisible formatting character (a bidi control or "+
				"zero-width character) that would make it look like another name", r)
		}
	}
	return nil
}

// validateForWrite validates a config about to be stored and returns Connect's 400 when it is not valid.
func (s *server) validateForWrite(cfg *props) error {
	infos, verr := s.validateConnectorConfig(cfg)
	if verr != nil {
		return verr.err
	}
	if infos.ErrorCount > 0 {
		return &httpError{Status: http.StatusBadRequest, Message: mirrorconfig.ErrorMessage(infos)}
	}
	// Validation reports null values; this guards the store, whose configs hold strings only.
	for _, k := range cfg.keys {
		if cfg.values[k] == nil {
			return &httpError{Status: http.StatusBadRequest, Message: "Connector configuration is invalid and contains the following 1 error(s):\n" +
				"Null value can not be supplied as the configuration value.\n" +
				"You can also find the above list of errors at the endpoint `/connector-plugins/{connectorType}/config/validate`"}
		}
	}
	return nil
}

// javaTrim is Java's String.trim: it strips every character up to U+0020 (control characters included) from
// both ends, and nothing else.
func javaTrim(s string) string {
	return strings.TrimFunc(s, func(r rune) bool { return r <= ' ' })
}

// ValidateWrite is the check a create makes of a connector config before storing it, for connectors stored
// without a request (declared from an mm2.properties): "" when the config is valid, else the message of the 400
// POST /connectors would answer.
func ValidateWrite(cfg Config, name string, config map[string]string) string {
	s := &server{plugins: &catalog{}, worker: mirrorconfig.Worker{ExactlyOnceSource: cfg.ExactlyOnceSource}, Config: Config{Clients: cfg.Clients}}
	p := propsFromMap(config)
	err := checkAndPutName(name, p)
	if err == nil {
		err = s.validateForWrite(p)
	}
	var h *httpError
	if errors.As(err, &h) {
		return h.Message
	}
	if err != nil {
		return err.Error()
	}
	return ""
}
