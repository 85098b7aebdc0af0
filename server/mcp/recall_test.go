package mcp

import (
	"reflect"
	"testing"

	"github.com/google/jsonschema-go/jsonschema"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestLoosen: recall's schema accepts both answers only when the compact
// one is a part of the full one; loosen refuses anything else.
func TestLoosen(t *testing.T) {
	type inner struct {
		A string `json:"a"`
		B int    `json:"b"`
	}
	type full struct {
		X  inner   `json:"x"`
		Xs []inner `json:"xs"`
		Y  string  `json:"y"`
	}
	type part struct {
		X struct {
			A string `json:"a,omitempty"`
		} `json:"x"`
		Xs []struct {
			B int `json:"b"`
		} `json:"xs"`
	}
	type extra struct {
		Z string `json:"z"`
	}
	type retyped struct {
		Y int `json:"y"`
	}
	schema := func(t *testing.T, v any) *jsonschema.Schema {
		s, err := jsonschema.ForType(reflect.TypeOf(v), schemaOptions)
		require.NoError(t, err)
		return s
	}
	t.Run("part", func(t *testing.T) {
		f := schema(t, full{})
		require.NoError(t, loosen(f, schema(t, part{}), ""))
		assert.Equal(t, []string{"x", "xs"}, f.Required, "y is left out of the part")
		assert.Empty(t, f.Properties["x"].Required, "a is optional in the part, b left out")
		assert.Equal(t, []string{"b"}, f.Properties["xs"].Items.Required)
	})
	for name, v := range map[string]any{"extra property": extra{}, "other type": retyped{}} {
		t.Run(name, func(t *testing.T) {
			assert.Error(t, loosen(schema(t, full{}), schema(t, v), ""))
		})
	}
}
