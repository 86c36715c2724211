package trainer

import (
	"bytes"
	"encoding/json"
	"fmt"
	"reflect"
	"strings"
)

// checkConfigKeys refuses what encoding/json would silently accept: a key
// given twice (the last would win) and a key spelt in another case than its
// field's name ("Epsilon" for "epsilon"; json matches names case-insensitively).
// Either would run settings other than the ones the user believes they typed.
func checkConfigKeys(data []byte) error {
	names := configKeyNames()
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	return walkKeys(dec, names, "")
}

// configKeyNames maps each Config key, lower-cased, to its exact spelling.
func configKeyNames() map[string]string {
	names := map[string]string{}
	addKeyNames(reflect.TypeOf(Config{}), names)
	return names
}

// addKeyNames adds t's JSON keys, those of embedded structs included (json
// promotes their fields to the enclosing object).
func addKeyNames(t reflect.Type, names map[string]string) {
	for i := 0; i < t.NumField(); i++ {
		f := t.Field(i)
		_, tagged := f.Tag.Lookup("json")
		if f.Anonymous && !tagged && f.Type.Kind() == reflect.Struct {
			addKeyNames(f.Type, names)
			continue
		}
		if !f.IsExported() {
			continue
		}
		name := f.Name
		if tag, ok := f.Tag.Lookup("json"); ok {
			if tag == "-" {
				continue
			}
			if n, _, _ := strings.Cut(tag, ","); n != "" {
				name = n
			}
		}
		names[strings.ToLower(name)] = name
	}
}

// walkKeys reads one JSON value; in objects it refuses duplicate keys at any
// depth and, at the top level (names != nil), keys cased unlike their field.
func walkKeys(dec *json.Decoder, names map[string]string, path string) error {
	tok, err := dec.Token()
	if err != nil {
		return err
	}
	switch tok {
	case json.Delim('{'):
		seen := map[string]bool{}
		for dec.More() {
			kt, err := dec.Token()
			if err != nil {
				return err
			}
			key, _ := kt.(string)
			if seen[key] {
				return fmt.Errorf("key %q given twice%s", key, where(path))
			}
			seen[key] = true
			if names != nil {
				if want, ok := names[strings.ToLower(key)]; ok && want != key {
					return fmt.Errorf("key %q: did you mean %q? (keys are case-sensitive)", key, want)
				}
			}
			if err := walkKeys(dec, nil, path+"."+key); err != nil {
				return err
			}
		}
		_, err = dec.Token() // '}'
		return err
	case json.Delim('['):
		for dec.More() {
			if err := walkKeys(dec, nil, path+"[]"); err != nil {
				return err
			}
		}
		_, err = dec.Token() // ']'
		return err
	}
	return nil
}

func where(path string) string {
	if path == "" {
		return ""
	}
	return " in " + strings.TrimPrefix(path, ".")
}
