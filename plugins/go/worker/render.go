// SPDX-License-Identifier: Apache-2.0

package main

import (
	"bytes"
	"encoding/base64"
	"fmt"
	"image"
	"image/png"
	"strconv"
	"strings"
)

// Results longer than this are cut (the whole value is still in the interpreter).
const maxResultText = 1 << 20

// valueBundle is the MIME bundle of a cell's result: the values of its trailing expression.
// One value is shown like fmt's %+v, except that a string is quoted so that "" and " " can be
// told apart; several (a call with more than one result) as "(42, <nil>)". An image.Image is
// also given as image/png.
func valueBundle(values []interface{}) (map[string]interface{}, map[string]interface{}) {
	data := map[string]interface{}{}
	metadata := map[string]interface{}{}
	if len(values) == 1 {
		data["text/plain"] = truncate(valueText(values[0]), maxResultText)
		if img, ok := values[0].(image.Image); ok {
			var buf bytes.Buffer
			if png.Encode(&buf, img) == nil {
				data["image/png"] = base64.StdEncoding.EncodeToString(buf.Bytes())
				bounds := img.Bounds()
				metadata["image/png"] = map[string]interface{}{"width": bounds.Dx(), "height": bounds.Dy()}
			}
		}
		return data, metadata
	}
	parts := make([]string, len(values))
	for i, v := range values {
		parts[i] = valueText(v)
	}
	data["text/plain"] = truncate("("+strings.Join(parts, ", ")+")", maxResultText)
	return data, metadata
}

// valueText is a short text for a value: quoted for a string, fmt's %+v for anything else
// (which uses a String or Error method when the value has one). A value whose formatting
// panics is described instead of ending the run.
func valueText(v interface{}) (text string) {
	defer func() {
		if r := recover(); r != nil {
			text = fmt.Sprintf("<%T: cannot format: %v>", v, r)
		}
	}()
	if s, ok := v.(string); ok {
		return strconv.Quote(s)
	}
	return fmt.Sprintf("%+v", v)
}
