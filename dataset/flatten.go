package dataset

import (
	"fmt"
	"math"
	"reflect"
	"slices"
	"strings"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
)

// A table's columns come from its row struct by the rules of the JSON
// report, so that a column is named as the report's figure is: a field's
// json name, a nested struct's fields joined with "_" (dt_ms.p99 is the
// column dt_ms_p99), an embedded struct's fields at its level, and a
// field below a pointer nullable (null where the report has null). Lists
// of structs are left out (a table's row type keeps them as rows of
// another table), except where the row struct asks for one as a column
// (listOf). Every integer is a signed int64 (Spark has no unsigned type),
// a time.Time a UTC timestamp in microseconds (Spark reads no
// nanosecond timestamps; the exact …_ns figures are int64 columns).

// column is one leaf of a row struct.
type column struct {
	name     string
	path     []int // field indexes from the row struct
	nullable bool  // below a pointer
	typ      reflect.Type
}

// table is the Arrow schema of a row struct and how to fill it.
type table struct {
	schema *arrow.Schema
	cols   []column
}

var timeType = reflect.TypeFor[time.Time]()

// tableOf flattens row type t (a struct). It fails on a type it cannot
// store and on two columns of one name.
func tableOf(t reflect.Type) (*table, error) {
	tb := &table{}
	if err := tb.walk(t, "", nil, false); err != nil {
		return nil, err
	}
	fields := make([]arrow.Field, len(tb.cols))
	seen := map[string]bool{}
	for i, c := range tb.cols {
		if seen[c.name] {
			return nil, fmt.Errorf("dataset: %s: two columns named %q", t, c.name)
		}
		seen[c.name] = true
		dt, err := arrowType(c.typ)
		if err != nil {
			return nil, fmt.Errorf("dataset: %s.%s: %w", t, c.name, err)
		}
		fields[i] = arrow.Field{Name: c.name, Type: dt, Nullable: c.nullable || dt.ID() == arrow.LIST || dt.ID() == arrow.MAP}
	}
	tb.schema = arrow.NewSchema(fields, nil)
	return tb, nil
}

func (tb *table) walk(t reflect.Type, prefix string, path []int, nullable bool) error {
	for i := range t.NumField() {
		f := t.Field(i)
		name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
		if !f.IsExported() || name == "-" {
			continue
		}
		p := append(slices.Clone(path), i)
		ft, null := f.Type, nullable
		if ft.Kind() == reflect.Pointer {
			ft, null = ft.Elem(), true
		}
		switch {
		case f.Anonymous && ft.Kind() == reflect.Struct:
			if err := tb.walk(ft, prefix, p, null); err != nil {
				return err
			}
			continue
		case name == "":
			name = f.Name
		}
		name = prefix + name
		switch {
		case ft.Kind() == reflect.Struct && ft != timeType:
			if err := tb.walk(ft, name+"_", p, null); err != nil {
				return err
			}
		case ft.Kind() == reflect.Slice && ft.Elem().Kind() == reflect.Struct && f.Tag.Get("dataset") != "list":
			// kept apart: rows of another table
		default:
			tb.cols = append(tb.cols, column{name: name, path: p, nullable: null, typ: ft})
		}
	}
	return nil
}

// arrowType is the column type of a leaf Go type.
func arrowType(t reflect.Type) (arrow.DataType, error) {
	switch t.Kind() {
	case reflect.Bool:
		return arrow.FixedWidthTypes.Boolean, nil
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		return arrow.PrimitiveTypes.Int64, nil
	case reflect.Float32, reflect.Float64:
		return arrow.PrimitiveTypes.Float64, nil
	case reflect.String:
		return arrow.BinaryTypes.String, nil
	case reflect.Map:
		if t.Key().Kind() == reflect.String && t.Elem().Kind() == reflect.String {
			return arrow.MapOf(arrow.BinaryTypes.String, arrow.BinaryTypes.String), nil
		}
	case reflect.Slice:
		if t.Elem().Kind() == reflect.Struct {
			sub, err := tableOf(t.Elem())
			if err != nil {
				return nil, err
			}
			return arrow.ListOf(arrow.StructOf(sub.schema.Fields()...)), nil
		}
		et, err := arrowType(t.Elem())
		if err != nil {
			return nil, err
		}
		return arrow.ListOf(et), nil
	case reflect.Struct:
		if t == timeType {
			return &arrow.TimestampType{Unit: arrow.Microsecond, TimeZone: "UTC"}, nil
		}
	}
	return nil, fmt.Errorf("no column type for %s", t)
}

// records builds an Arrow record of rows (a slice of the row struct).
func (tb *table) records(rows any) (arrow.RecordBatch, error) {
	b := array.NewRecordBuilder(memory.DefaultAllocator, tb.schema)
	defer b.Release()
	v := reflect.ValueOf(rows)
	for r := range v.Len() {
		if err := tb.appendRow(v.Index(r), b.Field); err != nil {
			return nil, err
		}
	}
	return b.NewRecordBatch(), nil
}

// appendRow appends the leaves of row, each to its column's builder.
func (tb *table) appendRow(row reflect.Value, builder func(int) array.Builder) error {
	for i, c := range tb.cols {
		leaf, ok := follow(row, c.path)
		if !ok {
			builder(i).AppendNull()
			continue
		}
		if err := appendValue(builder(i), leaf); err != nil {
			return fmt.Errorf("dataset: column %s: %w", c.name, err)
		}
	}
	return nil
}

// follow walks path from v; ok is false where a pointer on the way is nil.
func follow(v reflect.Value, path []int) (reflect.Value, bool) {
	for _, i := range path {
		if v.Kind() == reflect.Pointer {
			if v.IsNil() {
				return v, false
			}
			v = v.Elem()
		}
		v = v.Field(i)
	}
	if v.Kind() == reflect.Pointer {
		if v.IsNil() {
			return v, false
		}
		v = v.Elem()
	}
	return v, true
}

func appendValue(b array.Builder, v reflect.Value) error {
	switch b := b.(type) {
	case *array.BooleanBuilder:
		b.Append(v.Bool())
	case *array.Int64Builder:
		if v.CanUint() {
			u := v.Uint()
			if u > math.MaxInt64 {
				return fmt.Errorf("%d does not fit an int64", u)
			}
			b.Append(int64(u))
		} else {
			b.Append(v.Int())
		}
	case *array.Float64Builder:
		b.Append(v.Float())
	case *array.StringBuilder:
		b.Append(v.String())
	case *array.TimestampBuilder:
		b.Append(arrow.Timestamp(v.Interface().(time.Time).UnixMicro()))
	case *array.MapBuilder:
		b.Append(true)
		keys := v.MapKeys()
		slices.SortFunc(keys, func(a, b reflect.Value) int { return strings.Compare(a.String(), b.String()) })
		kb, ib := b.KeyBuilder().(*array.StringBuilder), b.ItemBuilder().(*array.StringBuilder)
		for _, k := range keys {
			kb.Append(k.String())
			ib.Append(v.MapIndex(k).String())
		}
	case *array.ListBuilder:
		b.Append(true)
		vb := b.ValueBuilder()
		for i := range v.Len() {
			e := v.Index(i)
			sb, ok := vb.(*array.StructBuilder)
			if !ok {
				if err := appendValue(vb, e); err != nil {
					return err
				}
				continue
			}
			if err := appendStruct(sb, e); err != nil {
				return err
			}
		}
	default:
		return fmt.Errorf("no way to append to %T", b)
	}
	return nil
}

// appendStruct appends struct value v (a list element) to sb, flattened
// as tableOf flattens a row.
func appendStruct(sb *array.StructBuilder, v reflect.Value) error {
	sub, err := tableOf(v.Type())
	if err != nil {
		return err
	}
	sb.Append(true)
	return sub.appendRow(v, sb.FieldBuilder)
}
