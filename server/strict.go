package server

import (
	"bytes"
	"encoding"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"reflect"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/mnemo-dev/mnemo/graph"
)

// Bounds every request body holds to, whatever its type.
const (
	// maxDepth is how deeply objects and arrays may nest.
	maxDepth = 32
	// maxString is the longest string (decoded, in bytes) any field may
	// hold: the largest text the graph stores. Longer strings are refused
	// while the body is scanned, before it is decoded and long before
	// extraction reads them.
	maxString = graph.MaxContentLen
)

// errSyntax marks a body the scanner cannot read; decode then lets
// encoding/json say what is wrong with it.
var errSyntax = errors.New("malformed JSON")

// checkStrict walks the JSON value in data against the Go type t that it
// will be decoded into and refuses what encoding/json lets through:
// a member name that matches a field only when case is ignored (json
// matches "CONTENT" to content), a member name given twice in one object
// (json keeps the last), unknown members, strings over maxString and
// nesting over maxDepth. It reads each byte once and allocates little, so a
// bad body is refused in a few milliseconds whatever its size.
func checkStrict(data []byte, t reflect.Type) error {
	s := &scanner{data: data, structs: map[reflect.Type]*structFields{}}
	if err := s.value(t, "", 0); err != nil {
		return err
	}
	s.space()
	if s.pos != len(s.data) {
		return errorf(http.StatusBadRequest, "invalid_json", "", "the request body must hold a single JSON value")
	}
	return nil
}

type scanner struct {
	data    []byte
	pos     int
	structs map[reflect.Type]*structFields
}

// structFields are the JSON member names of a struct type.
type structFields struct {
	exact map[string]reflect.Type // name -> field type
	fold  map[string]string       // lower-case name -> name
}

var (
	timeType        = reflect.TypeFor[time.Time]()
	jsonUnmarshaler = reflect.TypeFor[json.Unmarshaler]()
	textUnmarshaler = reflect.TypeFor[encoding.TextUnmarshaler]()
)

// concrete returns the type whose members the scanner checks: t without
// pointers, or nil when t decodes itself (time.Time, json.RawMessage) or is
// an interface, whose members are only checked for duplicates.
func concrete(t reflect.Type) reflect.Type {
	for t != nil && t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	if t == nil || t.Kind() == reflect.Interface {
		return nil
	}
	if p := reflect.PointerTo(t); p.Implements(jsonUnmarshaler) || p.Implements(textUnmarshaler) {
		return nil
	}
	return t
}

func (s *scanner) fieldsOf(t reflect.Type) *structFields {
	if f, ok := s.structs[t]; ok {
		return f
	}
	f := &structFields{exact: map[string]reflect.Type{}, fold: map[string]string{}}
	var walk func(t reflect.Type)
	walk = func(t reflect.Type) {
		for i := range t.NumField() {
			sf := t.Field(i)
			tag := sf.Tag.Get("json")
			if tag == "-" {
				continue
			}
			name, _, _ := strings.Cut(tag, ",")
			if sf.Anonymous && name == "" {
				if et := concrete(sf.Type); et != nil && et.Kind() == reflect.Struct {
					walk(et)
					continue
				}
			}
			if !sf.IsExported() {
				continue
			}
			if name == "" {
				name = sf.Name
			}
			if _, dup := f.exact[name]; !dup {
				f.exact[name] = sf.Type
				f.fold[strings.ToLower(name)] = name
			}
		}
	}
	walk(t)
	s.structs[t] = f
	return f
}

func (s *scanner) space() {
	for s.pos < len(s.data) {
		switch s.data[s.pos] {
		case ' ', '\t', '\n', '\r':
			s.pos++
		default:
			return
		}
	}
}

func (s *scanner) peek() byte {
	if s.pos < len(s.data) {
		return s.data[s.pos]
	}
	return 0
}

func (s *scanner) value(t reflect.Type, path string, depth int) error {
	if depth > maxDepth {
		return errorf(http.StatusBadRequest, "invalid_json", "",
			fmt.Sprintf("the request body nests deeper than %d levels", maxDepth))
	}
	if t == timeType {
		return s.time(path)
	}
	t = concrete(t)
	s.space()
	switch s.peek() {
	case '{':
		return s.object(t, path, depth)
	case '[':
		return s.array(t, path, depth)
	case '"':
		n, err := s.str()
		if err != nil {
			return err
		}
		if n > maxString {
			return errorf(http.StatusRequestEntityTooLarge, "too_large", path,
				fmt.Sprintf("%s is %d bytes, more than the %s any field may hold", path, n, graph.SizeText(maxString)))
		}
		return nil
	default:
		return s.literal()
	}
}

// time reads a member decoded into a time.Time: null, or a string that
// time.Time reads. Anything else is refused here, naming the member,
// rather than by encoding/json, whose error names neither the member nor
// the format.
func (s *scanner) time(path string) error {
	s.space()
	if s.peek() != '"' {
		start := s.pos
		if err := s.literal(); err == nil && string(s.data[start:s.pos]) == "null" {
			return nil
		}
		return errorf(http.StatusBadRequest, "invalid", path, path+" must be an RFC 3339 time string such as 2026-01-02T15:04:05Z")
	}
	start := s.pos
	if _, err := s.str(); err != nil {
		return err
	}
	var t time.Time
	if err := t.UnmarshalJSON(s.data[start:s.pos]); err != nil {
		return errorf(http.StatusBadRequest, "invalid", path,
			fmt.Sprintf("%s must be an RFC 3339 time such as 2026-01-02T15:04:05Z, not %.40s", path, s.data[start:s.pos]))
	}
	return nil
}

func (s *scanner) object(t reflect.Type, path string, depth int) error {
	s.pos++ // '{'
	var (
		fields *structFields
		elem   reflect.Type // of a map's values
	)
	if t != nil {
		switch t.Kind() {
		case reflect.Struct:
			fields = s.fieldsOf(t)
		case reflect.Map:
			elem = t.Elem()
		}
	}
	s.space()
	if s.peek() == '}' {
		s.pos++
		return nil
	}
	seen := map[string]bool{}
	for {
		s.space()
		if s.peek() != '"' {
			return errSyntax
		}
		key, err := s.key()
		if err != nil {
			return err
		}
		child := key
		if path != "" {
			child = path + "." + key
		}
		if seen[key] {
			return errorf(http.StatusBadRequest, "duplicate_field", child,
				fmt.Sprintf("field %s appears more than once", child))
		}
		seen[key] = true
		ft := elem
		if fields != nil {
			var ok bool
			if ft, ok = fields.exact[key]; !ok {
				if name, ok := fields.fold[strings.ToLower(key)]; ok {
					return errorf(http.StatusBadRequest, "unknown_field", child,
						fmt.Sprintf("unknown field %q: field names are case-sensitive, did you mean %q?", key, name))
				}
				return errorf(http.StatusBadRequest, "unknown_field", child, fmt.Sprintf("unknown field %q", key))
			}
		}
		s.space()
		if s.peek() != ':' {
			return errSyntax
		}
		s.pos++
		if err := s.value(ft, child, depth+1); err != nil {
			return err
		}
		s.space()
		switch s.peek() {
		case ',':
			s.pos++
		case '}':
			s.pos++
			return nil
		default:
			return errSyntax
		}
	}
}

func (s *scanner) array(t reflect.Type, path string, depth int) error {
	s.pos++ // '['
	var elem reflect.Type
	if t != nil && (t.Kind() == reflect.Slice || t.Kind() == reflect.Array) {
		elem = t.Elem()
	}
	s.space()
	if s.peek() == ']' {
		s.pos++
		return nil
	}
	for i := 0; ; i++ {
		if err := s.value(elem, path+"["+strconv.Itoa(i)+"]", depth+1); err != nil {
			return err
		}
		s.space()
		switch s.peek() {
		case ',':
			s.pos++
		case ']':
			s.pos++
			return nil
		default:
			return errSyntax
		}
	}
}

// key reads a member name.
func (s *scanner) key() (string, error) {
	start := s.pos
	if _, err := s.str(); err != nil {
		return "", err
	}
	raw := s.data[start:s.pos]
	if bytes.IndexByte(raw, '\\') < 0 {
		return string(raw[1 : len(raw)-1]), nil
	}
	var k string
	if err := json.Unmarshal(raw, &k); err != nil {
		return "", errSyntax
	}
	return k, nil
}

// str reads a string and returns its length once decoded, in bytes.
func (s *scanner) str() (int, error) {
	s.pos++ // '"'
	n := 0
	for s.pos < len(s.data) {
		c := s.data[s.pos]
		switch {
		case c == '"':
			s.pos++
			return n, nil
		case c < 0x20:
			return 0, errSyntax
		case c != '\\':
			s.pos++
			n++
			continue
		}
		if s.pos+1 >= len(s.data) {
			return 0, errSyntax
		}
		switch s.data[s.pos+1] {
		case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
			s.pos += 2
			n++
		case 'u':
			r, ok := s.hex4(s.pos + 2)
			if !ok {
				return 0, errSyntax
			}
			s.pos += 6
			if r >= 0xD800 && r < 0xDC00 && s.pos+1 < len(s.data) && s.data[s.pos] == '\\' && s.data[s.pos+1] == 'u' {
				if lo, ok := s.hex4(s.pos + 2); ok && lo >= 0xDC00 && lo < 0xE000 {
					s.pos += 6
					n += 4
					continue
				}
			}
			if r >= 0xD800 && r < 0xE000 {
				r = utf8.RuneError
			}
			n += utf8.RuneLen(r)
		default:
			return 0, errSyntax
		}
	}
	return 0, errSyntax
}

func (s *scanner) hex4(at int) (rune, bool) {
	if at+4 > len(s.data) {
		return 0, false
	}
	v, err := strconv.ParseUint(string(s.data[at:at+4]), 16, 32)
	return rune(v), err == nil
}

// literal skips a number, true, false or null; encoding/json checks it.
func (s *scanner) literal() error {
	start := s.pos
	for s.pos < len(s.data) {
		switch s.data[s.pos] {
		case ',', '}', ']', ' ', '\t', '\n', '\r':
			if s.pos == start {
				return errSyntax
			}
			return nil
		case '{', '[', '"', ':':
			return errSyntax
		}
		s.pos++
	}
	if s.pos == start {
		return errSyntax
	}
	return nil
}
