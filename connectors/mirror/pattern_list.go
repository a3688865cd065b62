package mirror

import (
	"errors"
	"fmt"
	"regexp"
	"regexp/syntax"
	"strings"
)

// PatternError reports a regex in a list config that kmirror cannot use, either because Java would
// reject it too or because RE2 cannot express it.
type PatternError struct {
	// Key is the config key, e.g. "topics.exclude".
	Key string
	// Pattern is the offending list element, or the whole joined list when no element fails alone.
	Pattern string
	// Reason says what is wrong with Pattern.
	Reason string
}

// Error implements error.
func (e *PatternError) Error() string {
	return fmt.Sprintf("%s: cannot use regex %q: %s", e.Key, e.Pattern, e.Reason)
}

// patternList is MirrorUtils.compilePatternList: the list's elements joined with '|' into one regex
// that must match the whole string. An empty list matches nothing, not everything, so "topics=" (blank)
// replicates no topic.
type patternList struct {
	re *regexp.Regexp // nil for the empty list
}

func (l patternList) matches(s string) bool {
	return l.re != nil && l.re.MatchString(s)
}

func compilePatternList(key string, elements []string) (patternList, error) {
	if len(elements) == 0 {
		return patternList{}, nil
	}
	joined := strings.Join(elements, "|")
	re, err := compileJavaRegex(joined)
	if err == nil {
		return patternList{re: re}, nil
	}
	// Java compiles the joined string, so an element can only be blamed when it fails by itself.
	for _, element := range elements {
		if _, elementErr := compileJavaRegex(element); elementErr != nil {
			return patternList{}, &PatternError{Key: key, Pattern: element, Reason: elementErr.Error()}
		}
	}
	return patternList{}, &PatternError{Key: key, Pattern: joined, Reason: err.Error()}
}

// compileJavaRegex compiles a Java regex for whole-string matching, as Matcher.matches does.
func compileJavaRegex(pattern string) (*regexp.Regexp, error) {
	translated, err := translateJavaRegex(pattern)
	if err != nil {
		return nil, err
	}
	re, err := regexp.Compile(`\A(?:` + translated + `)\z`)
	if err != nil {
		var syntaxErr *syntax.Error
		if errors.As(err, &syntaxErr) {
			return nil, fmt.Errorf("RE2 rejects it: %s: `%s`", syntaxErr.Code, syntaxErr.Expr)
		}
		return nil, fmt.Errorf("RE2 rejects it: %w", err)
	}
	return re, nil
}
