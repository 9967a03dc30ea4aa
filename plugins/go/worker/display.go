// SPDX-License-Identifier: Apache-2.0

package main

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"image"
	"image/jpeg"
	"image/png"
	"reflect"
	"regexp"
	"strings"
	"sync"

	"github.com/traefik/yaegi/interp"
)

// displayMimes are the MIME types the host's faces know how to show.
var displayMimes = []string{"text/plain", "text/html", "text/markdown", "text/latex",
	"image/svg+xml", "image/png", "image/jpeg", "application/json"}

// helperExports is the compiled package "replhost" that cells see (imported by name, like the
// standard library): replhost.Display and the function that collects a cell's values.
var helperExports = interp.Exports{
	"replhost/replhost": {
		"Display":    reflect.ValueOf(Display),
		"CellValues": reflect.ValueOf(CellValues),
	},
}

// displaySink sends a display event for the running cell; set by the driver.
var displaySink struct {
	sync.Mutex
	send func(data, metadata map[string]interface{})
}

// Display shows data of a MIME type in the cell's output, in order with what the cell prints:
//
//	display("text/html", "<b>hi</b>")
//	display("image/png", pngBytes)         // []byte, base64 text, or an image.Image
//	display("application/json", value)     // JSON text, or any value encoding/json can encode
//
// Bad input panics with the reason, which ends the cell with an error like any panic.
func Display(mime string, data interface{}) {
	bundle, metadata, err := mimeBundle(mime, data)
	if err != nil {
		panic("display: " + err.Error())
	}
	displaySink.Lock()
	send := displaySink.send
	displaySink.Unlock()
	if send != nil {
		send(bundle, metadata)
	}
}

// CellValues returns its arguments: a cell's trailing expression is evaluated as its argument,
// which is how every value of a call with several results is seen (Go passes them all to a
// variadic function).
func CellValues(values ...interface{}) []interface{} { return values }

var mimePattern = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9!#$&^_.+-]*/[A-Za-z0-9][A-Za-z0-9!#$&^_.+-]*$`)
var base64Pattern = regexp.MustCompile(`^[A-Za-z0-9+/\s]+={0,2}\s*$`)

func isTextMime(mime string) bool {
	return strings.HasPrefix(mime, "text/") || mime == "image/svg+xml" ||
		strings.HasSuffix(mime, "+xml") || mime == "application/javascript"
}

func isJSONMime(mime string) bool {
	return mime == "application/json" || strings.HasSuffix(mime, "+json")
}

func mimeBundle(mime string, data interface{}) (map[string]interface{}, map[string]interface{}, error) {
	mime = strings.ToLower(strings.TrimSpace(mime))
	if !mimePattern.MatchString(mime) {
		return nil, nil, fmt.Errorf("%q is not a MIME type (like \"text/html\" or \"image/png\")", mime)
	}
	if data == nil {
		return nil, nil, fmt.Errorf("no data to show as %s", mime)
	}
	metadata := map[string]interface{}{}
	switch {
	case isJSONMime(mime):
		value, err := jsonValue(data)
		if err != nil {
			return nil, nil, err
		}
		return map[string]interface{}{mime: value}, metadata, nil
	case isTextMime(mime):
		return map[string]interface{}{mime: textOf(data)}, metadata, nil
	}
	raw, err := binaryOf(mime, data)
	if err != nil {
		return nil, nil, err
	}
	if mime == "image/png" {
		if config, err := png.DecodeConfig(bytes.NewReader(raw)); err == nil {
			metadata[mime] = map[string]interface{}{"width": config.Width, "height": config.Height}
		}
	}
	return map[string]interface{}{mime: base64.StdEncoding.EncodeToString(raw)}, metadata, nil
}

func textOf(data interface{}) string {
	switch v := data.(type) {
	case string:
		return v
	case []byte:
		return string(v)
	case fmt.Stringer:
		return v.String()
	}
	return fmt.Sprint(data)
}

// jsonValue is JSON text taken as it is, or a value encoded with encoding/json.
func jsonValue(data interface{}) (json.RawMessage, error) {
	var text []byte
	switch v := data.(type) {
	case string:
		text = []byte(v)
	case []byte:
		text = v
	case json.RawMessage:
		text = v
	}
	if text != nil && json.Valid(text) {
		return json.RawMessage(text), nil
	}
	if text != nil {
		// Text that is not JSON is shown as a JSON string.
		encoded, _ := json.Marshal(string(text))
		return encoded, nil
	}
	encoded, err := json.Marshal(data)
	if err != nil {
		return nil, fmt.Errorf("cannot encode a %T as JSON: %v", data, err)
	}
	return encoded, nil
}

// binaryOf is the bytes of binary data: raw bytes, base64 text, or an image to encode.
func binaryOf(mime string, data interface{}) ([]byte, error) {
	switch v := data.(type) {
	case []byte:
		return v, nil
	case string:
		if base64Pattern.MatchString(v) {
			if decoded, err := base64.StdEncoding.DecodeString(strings.Join(strings.Fields(v), "")); err == nil {
				return decoded, nil
			}
		}
		return []byte(v), nil
	case image.Image:
		var buf bytes.Buffer
		var err error
		switch mime {
		case "image/png":
			err = png.Encode(&buf, v)
		case "image/jpeg":
			err = jpeg.Encode(&buf, v, nil)
		default:
			return nil, fmt.Errorf("an image can be shown as image/png or image/jpeg, not %s", mime)
		}
		if err != nil {
			return nil, fmt.Errorf("cannot encode the image as %s: %v", mime, err)
		}
		return buf.Bytes(), nil
	}
	return nil, fmt.Errorf("%s data must be []byte, base64 text or an image.Image, not %T", mime, data)
}
