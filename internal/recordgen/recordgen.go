// Package recordgen derives what the root package's record types need from
// their declaration — the Go struct with its tags — so that a record is
// written out once (issue 37): its JSON encoder (AppendJSON, MarshalJSON),
// the Absent method that tells the Arrow and Parquet sinks which fields do
// not apply, and its JSON Schema in docs/schemas. It reads the package's
// source (go/ast), not its compiled types, so that it runs before the code
// it writes exists. `go generate` in the repository's root runs it
// (tools/recordgen); TestGeneratedRecords fails when what it would write
// differs from what is in the tree.
//
// The Arrow and Parquet columns need no generated code: sinks/arrow maps the
// same struct and tags by reflection once per record type (the hot record
// types, entities and signal samples, have hand-written column builders).
//
// The tags a record type's fields carry:
//
//	json:"name"            the field's name in JSON, Arrow and Parquet; "-": in none of them
//	tracecast:"nullable"   may be null in every output: NaN, the zero time, an empty
//	                       string, a negative integer, or when its nullif condition holds
//	tracecast:"jsonnull"   an empty string is null in JSON only (its Arrow column keeps "")
//	nullif:"field=value"   (with nullable) null when another field holds value (a JSON
//	                       literal, or a bare string): the record's Absent method and the
//	                       schema's if/then/else
//	desc:"..."             the field's description in the JSON Schema
//	schema:"k=v,..."       more JSON Schema keywords: minimum, maximum, exclusiveMinimum,
//	                       enum (values joined by |), format, type (of a raw JSON field:
//	                       object or array), items (the type of an array's items)
//
// A record type is generated when its declare call (recordtypes.go) gives
// its description; the entity's JSON (written by nature, without
// allocation, by sinks/jsonl) and its schema are written by hand.
package recordgen

import (
	"bytes"
	"encoding/json"
	"fmt"
	"go/ast"
	"go/format"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strconv"
	"strings"
)

// GoFile is the generated Go file, in the package's directory.
const GoFile = "records_gen.go"

// SchemaDir is where the JSON Schemas go, relative to the package's directory.
const SchemaDir = "docs/schemas"

// Record is one record type as declared: its declare call and its struct.
type Record struct {
	Type, Name, Plural, Schema, Doc string
	Fields                          []Field
	// HandWritten names the file that declares the type's AppendJSON by
	// hand ("" when none): such a type is not generated.
	HandWritten string
}

// Field is one field of a record's struct that goes into the outputs.
type Field struct {
	Go, Name string
	Kind     kind
	GoType   string // for ints, the Go type (to convert to int64)
	Nullable bool   // tracecast:"nullable"
	JSONNull bool   // tracecast:"jsonnull"
	NullIf   *cond
	Desc     string
	Schema   [][2]string // extra JSON Schema keywords, in tag order
}

type kind int

const (
	kString kind = iota
	kStringer
	kBool
	kInt
	kFloat
	kTime
	kOptFloat
	kRaw
	kFloatMap
)

// cond is a nullif condition: field Go (column Name) holds Value (JSON).
type cond struct {
	Go, Name, Value string
}

func (c *cond) key() string { return c.Name + "=" + c.Value }

// Parse reads the record types of the package in dir.
func Parse(dir string) ([]Record, error) {
	fset := token.NewFileSet()
	paths, err := filepath.Glob(filepath.Join(dir, "*.go"))
	if err != nil {
		return nil, err
	}
	structs := map[string]*ast.StructType{}
	methods := map[string]map[string]string{} // type → method → file
	var decls []*ast.CallExpr
	for _, p := range paths {
		if strings.HasSuffix(p, "_test.go") || filepath.Base(p) == GoFile {
			continue
		}
		f, err := parser.ParseFile(fset, p, nil, parser.SkipObjectResolution)
		if err != nil {
			return nil, err
		}
		for _, d := range f.Decls {
			switch d := d.(type) {
			case *ast.GenDecl:
				for _, s := range d.Specs {
					switch s := s.(type) {
					case *ast.TypeSpec:
						if st, ok := s.Type.(*ast.StructType); ok {
							structs[s.Name.Name] = st
						}
					case *ast.ValueSpec:
						if len(s.Names) == 1 && s.Names[0].Name == "recordTypes" && len(s.Values) == 1 {
							if cl, ok := s.Values[0].(*ast.CompositeLit); ok {
								for _, e := range cl.Elts {
									if c, ok := e.(*ast.CallExpr); ok {
										decls = append(decls, c)
									}
								}
							}
						}
					}
				}
			case *ast.FuncDecl:
				if d.Recv == nil || len(d.Recv.List) != 1 {
					continue
				}
				t := d.Recv.List[0].Type
				if s, ok := t.(*ast.StarExpr); ok {
					t = s.X
				}
				if id, ok := t.(*ast.Ident); ok {
					if methods[id.Name] == nil {
						methods[id.Name] = map[string]string{}
					}
					methods[id.Name][d.Name.Name] = filepath.Base(p)
				}
			}
		}
	}
	if len(decls) == 0 {
		return nil, fmt.Errorf("%s: no recordTypes declarations", dir)
	}
	var out []Record
	for _, c := range decls {
		r, err := parseDeclare(fset, c)
		if err != nil {
			return nil, err
		}
		st, ok := structs[r.Type]
		if !ok {
			return nil, fmt.Errorf("%s: record type %s: no struct", fset.Position(c.Pos()), r.Type)
		}
		r.HandWritten = methods[r.Type]["AppendJSON"]
		if r.Doc != "" && r.HandWritten == "" {
			if r.Fields, err = parseFields(fset, r.Type, st, methods); err != nil {
				return nil, err
			}
		}
		out = append(out, r)
	}
	return out, nil
}

// Generated reports whether the generator writes r's encoder and schema.
func (r Record) Generated() bool { return r.Doc != "" && r.HandWritten == "" }

func parseDeclare(fset *token.FileSet, c *ast.CallExpr) (Record, error) {
	ix, ok := c.Fun.(*ast.IndexExpr)
	if !ok {
		return Record{}, fmt.Errorf("%s: not declare[T](...)", fset.Position(c.Pos()))
	}
	id, ok := ix.Index.(*ast.Ident)
	if !ok || len(c.Args) < 4 {
		return Record{}, fmt.Errorf("%s: not declare[T](name, plural, schema, trace[, doc])", fset.Position(c.Pos()))
	}
	var s [4]string
	for i, a := range []int{0, 1, 2, 4} {
		if a >= len(c.Args) {
			break
		}
		v, err := stringLit(c.Args[a])
		if err != nil {
			return Record{}, fmt.Errorf("%s: %v", fset.Position(c.Args[a].Pos()), err)
		}
		s[i] = v
	}
	return Record{Type: id.Name, Name: s[0], Plural: s[1], Schema: s[2], Doc: s[3]}, nil
}

// stringLit is the value of a string literal or a sum of them.
func stringLit(e ast.Expr) (string, error) {
	switch e := e.(type) {
	case *ast.BasicLit:
		if e.Kind == token.STRING {
			return strconv.Unquote(e.Value)
		}
	case *ast.BinaryExpr:
		if e.Op == token.ADD {
			a, err := stringLit(e.X)
			if err != nil {
				return "", err
			}
			b, err := stringLit(e.Y)
			return a + b, err
		}
	case *ast.ParenExpr:
		return stringLit(e.X)
	}
	return "", fmt.Errorf("not a string literal")
}

func parseFields(fset *token.FileSet, typ string, st *ast.StructType, methods map[string]map[string]string) ([]Field, error) {
	var out []Field
	byGo := map[string]*Field{}
	for _, af := range st.Fields.List {
		pos := fset.Position(af.Pos())
		if len(af.Names) != 1 {
			return nil, fmt.Errorf("%s: %s: one field per line (its tags are its own)", pos, typ)
		}
		if !af.Names[0].IsExported() {
			continue
		}
		var tag reflect.StructTag
		if af.Tag != nil {
			s, err := strconv.Unquote(af.Tag.Value)
			if err != nil {
				return nil, fmt.Errorf("%s: %v", pos, err)
			}
			tag = reflect.StructTag(s)
		}
		f := Field{Go: af.Names[0].Name}
		name, _, _ := strings.Cut(tag.Get("json"), ",")
		if name == "-" {
			continue
		}
		if name == "" {
			return nil, fmt.Errorf("%s: %s.%s: no json tag (the field's name in every output)", pos, typ, f.Go)
		}
		f.Name = name
		for _, o := range strings.Split(tag.Get("tracecast"), ",") {
			switch o {
			case "":
			case "nullable":
				f.Nullable = true
			case "jsonnull":
				f.JSONNull = true
			default:
				return nil, fmt.Errorf("%s: %s.%s: tracecast:%q is not nullable or jsonnull", pos, typ, f.Go, o)
			}
		}
		if f.Desc = tag.Get("desc"); f.Desc == "" {
			return nil, fmt.Errorf("%s: %s.%s: no desc tag (its JSON Schema description)", pos, typ, f.Go)
		}
		if s := tag.Get("schema"); s != "" {
			for _, kv := range strings.Split(s, ",") {
				k, v, ok := strings.Cut(kv, "=")
				if !ok {
					return nil, fmt.Errorf("%s: %s.%s: schema:%q: not key=value", pos, typ, f.Go, kv)
				}
				switch k {
				case "minimum", "maximum", "exclusiveMinimum":
					if !json.Valid([]byte(v)) {
						return nil, fmt.Errorf("%s: %s.%s: schema %s=%q is not a number", pos, typ, f.Go, k, v)
					}
				case "enum", "format", "type", "items":
				default:
					return nil, fmt.Errorf("%s: %s.%s: schema keyword %q unknown", pos, typ, f.Go, k)
				}
				f.Schema = append(f.Schema, [2]string{k, v})
			}
		}
		if s := tag.Get("nullif"); s != "" {
			k, v, ok := strings.Cut(s, "=")
			if !ok {
				return nil, fmt.Errorf("%s: %s.%s: nullif:%q: not field=value", pos, typ, f.Go, s)
			}
			if !json.Valid([]byte(v)) {
				v = strconv.Quote(v)
			}
			if !f.Nullable {
				// sinks/arrow reads the tracecast tag: without it the column
				// would not be nullable.
				return nil, fmt.Errorf("%s: %s.%s: nullif without tracecast:\"nullable\"", pos, typ, f.Go)
			}
			f.NullIf = &cond{Name: k, Value: v}
		}
		var err error
		if f.Kind, f.GoType, err = kindOf(af.Type, methods); err != nil {
			return nil, fmt.Errorf("%s: %s.%s: %v", pos, typ, f.Go, err)
		}
		out = append(out, f)
	}
	for i := range out {
		byGo[out[i].Name] = &out[i]
	}
	for i := range out {
		if c := out[i].NullIf; c != nil {
			g, ok := byGo[c.Name]
			if !ok {
				return nil, fmt.Errorf("%s.%s: nullif names %q, not a field", typ, out[i].Go, c.Name)
			}
			c.Go = g.Go
			if _, err := goCond("r", g, c.Value); err != nil {
				return nil, fmt.Errorf("%s.%s: %v", typ, out[i].Go, err)
			}
		}
	}
	return out, nil
}

func kindOf(e ast.Expr, methods map[string]map[string]string) (kind, string, error) {
	switch t := e.(type) {
	case *ast.Ident:
		switch t.Name {
		case "string":
			return kString, "", nil
		case "bool":
			return kBool, "", nil
		case "int", "int32", "int64":
			return kInt, t.Name, nil
		case "float64":
			return kFloat, "", nil
		}
		if _, ok := methods[t.Name]["String"]; ok {
			return kStringer, "", nil
		}
	case *ast.SelectorExpr:
		if x, ok := t.X.(*ast.Ident); ok {
			switch x.Name + "." + t.Sel.Name {
			case "time.Time":
				return kTime, "", nil
			case "json.RawMessage":
				return kRaw, "", nil
			}
		}
	case *ast.StarExpr:
		if id, ok := t.X.(*ast.Ident); ok && id.Name == "float64" {
			return kOptFloat, "", nil
		}
	case *ast.MapType:
		k, ok1 := t.Key.(*ast.Ident)
		v, ok2 := t.Value.(*ast.Ident)
		if ok1 && ok2 && k.Name == "string" && v.Name == "float64" {
			return kFloatMap, "", nil
		}
	}
	return 0, "", fmt.Errorf("type %s has no output mapping", types(e))
}

func types(e ast.Expr) string {
	var b bytes.Buffer
	_ = format.Node(&b, token.NewFileSet(), e)
	return b.String()
}

// goCond is the Go expression, on receiver rv, of "field g holds value".
func goCond(rv string, g *Field, value string) (string, error) {
	x := rv + "." + g.Go
	switch g.Kind {
	case kBool:
		switch value {
		case "true":
			return x, nil
		case "false":
			return "!" + x, nil
		}
	case kString:
		if s, err := strconv.Unquote(value); err == nil {
			return x + " == " + strconv.Quote(s), nil
		}
	case kInt, kFloat:
		if _, err := strconv.ParseFloat(value, 64); err == nil {
			return x + " == " + value, nil
		}
	}
	return "", fmt.Errorf("nullif: %s cannot be compared with %s", g.Go, value)
}

// Generate returns the files the generator writes for the package in dir,
// by path relative to dir.
func Generate(dir string) (map[string][]byte, error) {
	recs, err := Parse(dir)
	if err != nil {
		return nil, err
	}
	out := map[string][]byte{}
	src, err := goSource(recs)
	if err != nil {
		return nil, err
	}
	out[GoFile] = src
	for _, r := range recs {
		if r.Generated() {
			out[filepath.Join(SchemaDir, r.Name+".json")] = jsonSchema(r)
		}
	}
	return out, nil
}

// Write writes what Generate returns, and reports the files it changed.
func Write(dir string) ([]string, error) {
	files, err := Generate(dir)
	if err != nil {
		return nil, err
	}
	var changed []string
	for _, p := range slices.Sorted(mapsKeys(files)) {
		path := filepath.Join(dir, p)
		if old, err := os.ReadFile(path); err == nil && bytes.Equal(old, files[p]) {
			continue
		}
		if err := os.WriteFile(path, files[p], 0o644); err != nil {
			return changed, err
		}
		changed = append(changed, p)
	}
	return changed, nil
}

func mapsKeys(m map[string][]byte) func(func(string) bool) {
	return func(yield func(string) bool) {
		for k := range m {
			if !yield(k) {
				return
			}
		}
	}
}

func goSource(recs []Record) ([]byte, error) {
	var b bytes.Buffer
	b.WriteString("// Code generated by go run ./tools/recordgen (internal/recordgen); DO NOT EDIT.\n\n")
	b.WriteString("package tracecast\n\n")
	for _, r := range recs {
		if !r.Generated() {
			continue
		}
		fmt.Fprintf(&b, "// AppendJSON writes the %s as one JSON object, %q first (the record contract).\n", r.Name, "record")
		fmt.Fprintf(&b, "func (r %s) AppendJSON(b []byte) []byte {\n", r.Type)
		fmt.Fprintf(&b, "\tb = append(b, `{\"record\":%s`...)\n", strconv.Quote(r.Name))
		for i := range r.Fields {
			f := &r.Fields[i]
			enc := encoder(f)
			switch {
			case f.NullIf != nil:
				c, _ := goCond("r", fieldByName(r.Fields, f.NullIf.Name), f.NullIf.Value)
				fmt.Fprintf(&b, "\tif %s {\n\t\tb = appendNull(b, %q)\n\t} else {\n\t\t%s\n\t}\n", c, f.Name, enc)
			case f.Nullable && f.Kind == kInt:
				fmt.Fprintf(&b, "\tif r.%s < 0 {\n\t\tb = appendNull(b, %q)\n\t} else {\n\t\t%s\n\t}\n", f.Go, f.Name, enc)
			default:
				fmt.Fprintf(&b, "\t%s\n", enc)
			}
		}
		b.WriteString("\treturn append(b, '}')\n}\n\n")
		b.WriteString("// MarshalJSON is AppendJSON, for encoding/json users.\n")
		fmt.Fprintf(&b, "func (r %s) MarshalJSON() ([]byte, error) { return r.AppendJSON(nil), nil }\n\n", r.Type)
		absent(&b, r)
	}
	src, err := format.Source(b.Bytes())
	if err != nil {
		return nil, fmt.Errorf("generated Go: %v\n%s", err, b.Bytes())
	}
	return src, nil
}

func fieldByName(fs []Field, name string) *Field {
	for i := range fs {
		if fs[i].Name == name {
			return &fs[i]
		}
	}
	return nil
}

// absent writes the Absent method (tracecast.Partial) of a record with
// nullif fields.
func absent(b *bytes.Buffer, r Record) {
	var keys []string
	cols := map[string][]string{}
	for _, f := range r.Fields {
		if f.NullIf != nil {
			k := f.NullIf.key()
			if cols[k] == nil {
				keys = append(keys, k)
			}
			cols[k] = append(cols[k], strconv.Quote(f.Name))
		}
	}
	if len(keys) == 0 {
		return
	}
	fmt.Fprintf(b, "// Absent reports whether the field of that column does not apply to the %s (tracecast.Partial).\n", r.Name)
	fmt.Fprintf(b, "func (r *%s) Absent(column string) bool {\n\tswitch column {\n", r.Type)
	for _, k := range keys {
		name, value, _ := strings.Cut(k, "=")
		c, _ := goCond("r", fieldByName(r.Fields, name), value)
		fmt.Fprintf(b, "\tcase %s:\n\t\treturn %s\n", strings.Join(cols[k], ", "), c)
	}
	b.WriteString("\t}\n\treturn false\n}\n\n")
}

func encoder(f *Field) string {
	x := "r." + f.Go
	k := strconv.Quote(f.Name)
	switch f.Kind {
	case kString:
		if f.Nullable || f.JSONNull {
			return fmt.Sprintf("b = appendStrOrNull(b, %s, %s)", k, x)
		}
		return fmt.Sprintf("b = appendStr(b, %s, %s)", k, x)
	case kStringer:
		if f.Nullable || f.JSONNull {
			return fmt.Sprintf("b = appendStrOrNull(b, %s, %s.String())", k, x)
		}
		return fmt.Sprintf("b = appendStr(b, %s, %s.String())", k, x)
	case kBool:
		return fmt.Sprintf("b = appendBool(b, %s, %s)", k, x)
	case kInt:
		if f.GoType != "int64" {
			x = "int64(" + x + ")"
		}
		return fmt.Sprintf("b = appendI64(b, %s, %s)", k, x)
	case kFloat:
		return fmt.Sprintf("b = appendF(b, %s, %s)", k, x)
	case kTime:
		return fmt.Sprintf("b = appendTime(b, %s, %s)", k, x)
	case kOptFloat:
		return fmt.Sprintf("b = appendOptF(b, %s, %s)", k, x)
	case kRaw:
		return fmt.Sprintf("b = appendRawJSON(b, %s, %s)", k, x)
	case kFloatMap:
		return fmt.Sprintf("b = appendFloatMap(b, %s, %s)", k, x)
	}
	panic("unreachable")
}

// jsonType is a field's JSON Schema type (nullable: with "null").
func jsonType(f *Field) (typ string, nullable bool) {
	switch f.Kind {
	case kString, kStringer:
		typ = "string"
	case kBool:
		typ = "boolean"
	case kInt:
		typ = "integer"
	case kFloat:
		typ = "number"
	case kTime:
		return "string", true
	case kOptFloat:
		return "number", true
	case kRaw, kFloatMap:
		typ = "object"
		for _, kv := range f.Schema {
			if kv[0] == "type" {
				typ = kv[1]
			}
		}
		return typ, true
	}
	return typ, f.Nullable || f.JSONNull
}

// obj is a JSON object that keeps its keys' order.
type obj []kv

type kv struct {
	k string
	v any // string, json.RawMessage, []any, obj
}

func (o obj) write(b *bytes.Buffer) {
	b.WriteByte('{')
	for i, e := range o {
		if i > 0 {
			b.WriteByte(',')
		}
		writeValue(b, e.k)
		b.WriteByte(':')
		writeValue(b, e.v)
	}
	b.WriteByte('}')
}

func writeValue(b *bytes.Buffer, v any) {
	switch v := v.(type) {
	case obj:
		v.write(b)
	case json.RawMessage:
		b.Write(v)
	case []any:
		b.WriteByte('[')
		for i, e := range v {
			if i > 0 {
				b.WriteByte(',')
			}
			writeValue(b, e)
		}
		b.WriteByte(']')
	case string:
		enc := json.NewEncoder(b)
		enc.SetEscapeHTML(false)
		_ = enc.Encode(v)
		b.Truncate(b.Len() - 1) // Encode's newline
	default:
		panic(fmt.Sprintf("recordgen: %T in a schema", v))
	}
}

func typeValue(typ string, nullable bool) any {
	if nullable {
		return []any{typ, "null"}
	}
	return typ
}

func jsonSchema(r Record) []byte {
	version := r.Schema[strings.LastIndexByte(r.Schema, '/')+1:]
	short := strings.TrimPrefix(r.Schema[:strings.LastIndexByte(r.Schema, '/')], "tracecast.")
	props := obj{
		{"record", obj{{"const", r.Name}, {"description", "the record type; first in every record"}}},
		{"schema", obj{{"const", r.Schema}, {"description", "Kafka messages only: the versioned schema name, first in the message"}}},
	}
	required := []any{"record"}
	var conds []string
	then, els := map[string]obj{}, map[string]obj{}
	for i := range r.Fields {
		f := &r.Fields[i]
		typ, nullable := jsonType(f)
		p := obj{{"type", typeValue(typ, nullable)}, {"description", f.Desc}}
		for _, e := range f.Schema {
			switch e[0] {
			case "type":
			case "enum":
				var vals []any
				for _, s := range strings.Split(e[1], "|") {
					vals = append(vals, s)
				}
				if nullable {
					vals = append(vals, json.RawMessage("null"))
				}
				p = append(p, kv{"enum", vals})
			case "items":
				p = append(p, kv{"items", obj{{"type", e[1]}}})
			case "format":
				p = append(p, kv{"format", e[1]})
			default:
				p = append(p, kv{e[0], json.RawMessage(e[1])})
			}
		}
		switch f.Kind {
		case kTime:
			p = append(p, kv{"format", "date-time"})
		case kFloatMap:
			p = append(p, kv{"additionalProperties", obj{{"type", "number"}}})
		}
		props = append(props, kv{f.Name, p})
		required = append(required, f.Name)
		if c := f.NullIf; c != nil {
			k := c.key()
			if _, ok := then[k]; !ok {
				conds = append(conds, k)
			}
			then[k] = append(then[k], kv{f.Name, obj{{"type", "null"}}})
			els[k] = append(els[k], kv{f.Name, obj{{"type", typ}}})
		}
	}
	doc := obj{
		{"$schema", "https://json-schema.org/draft/2020-12/schema"},
		{"$id", "urn:tracecast:schema:" + short + ":" + version},
		{"title", r.Schema},
		{"description", r.Doc},
		{"type", "object"},
		{"properties", props},
		{"required", required},
		{"additionalProperties", json.RawMessage("false")},
	}
	var ifs []any
	for _, k := range conds {
		name, value, _ := strings.Cut(k, "=")
		ifs = append(ifs, obj{
			{"if", obj{{"properties", obj{{name, obj{{"const", json.RawMessage(value)}}}}}}},
			{"then", obj{{"properties", then[k]}}},
			{"else", obj{{"properties", els[k]}}},
		})
	}
	switch {
	case len(ifs) == 1:
		doc = append(doc, ifs[0].(obj)...)
	case len(ifs) > 1:
		doc = append(doc, kv{"allOf", ifs})
	}
	var raw, out bytes.Buffer
	doc.write(&raw)
	_ = json.Indent(&out, raw.Bytes(), "", "  ")
	out.WriteByte('\n')
	return out.Bytes()
}
