// Package argolua runs Argo CD health scripts under gopher-lua as Argo CD
// does, for the tests of deploy/argocd's health.lua and the twin's check of
// the health a live ModelDeployment gets.
//
// The Lua setup reproduces Argo CD's util/lua/lua.go (v3.5.1 and master,
// 2026-08): VM.runLuaWithResourceActionParameters, VM.ExecuteHealthLua,
// decodeValue and oslib_safe.go. Scripts from argocd-cm run with
// UseOpenLibs false unless resource.customizations.useOpenLibs.<gk> is
// true; built-in scripts always run with it true.
package argolua

import (
	"context"
	"encoding/json"
	"fmt"
	"testing"
	"time"

	lua "github.com/yuin/gopher-lua"
	utiljson "k8s.io/apimachinery/pkg/util/json"
	"sigs.k8s.io/yaml"
)

// NewLState prepares an LState as Argo CD does: with UseOpenLibs false it
// skips gopher-lua's libraries, then opens package, base and table, calls
// the safe os opener and preloads the safe os module. The state is closed,
// and its context cancelled, when t ends.
//
// Argo CD gives a script one second of wall clock. The harness gives
// hangGuard instead: a wall-clock budget asserted in a test fails on a busy
// runner (it did, at 1.3 s, in CI), so the script's speed against Argo CD's
// second is measured by BenchmarkHealthLua in deploy/argocd, and the
// context here only stops a script that never ends.
func NewLState(t testing.TB, useOpenLibs bool) *lua.LState {
	t.Helper()
	l := lua.NewState(lua.Options{SkipOpenLibs: !useOpenLibs})
	t.Cleanup(l.Close)
	for _, lib := range []struct {
		name string
		open lua.LGFunction
	}{
		{lua.LoadLibName, lua.OpenPackage},
		{lua.BaseLibName, lua.OpenBase},
		{lua.TabLibName, lua.OpenTable},
		{lua.OsLibName, openSafeOs},
	} {
		if err := l.CallByParam(lua.P{Fn: l.NewFunction(lib.open), NRet: 0, Protect: true}, lua.LString(lib.name)); err != nil {
			t.Fatalf("open %s: %v", lib.name, err)
		}
	}
	l.PreloadModule(lua.OsLibName, safeOsLoader)
	ctx, cancel := context.WithTimeout(context.Background(), hangGuard)
	t.Cleanup(cancel)
	l.SetContext(ctx)
	return l
}

// hangGuard stops a script that loops forever; see NewLState.
const hangGuard = 2 * time.Minute

// safeOsFuncs stands in for Argo CD's reduced os library, which has only
// time and date. health.lua uses neither, so these are simplified.
var safeOsFuncs = map[string]lua.LGFunction{
	"time": func(l *lua.LState) int { l.Push(lua.LNumber(time.Now().Unix())); return 1 },
	"date": func(l *lua.LState) int { l.Push(lua.LString(time.Now().Format(time.ANSIC))); return 1 },
}

// openSafeOs registers under the table library's name, as Argo CD's
// OpenSafeOs does. table is already loaded by then, so this adds nothing:
// in Argo CD a restricted script has no global os, only require("os").
func openSafeOs(l *lua.LState) int {
	l.Push(l.RegisterModule(lua.TabLibName, safeOsFuncs))
	return 1
}

func safeOsLoader(l *lua.LState) int {
	l.Push(l.SetFuncs(l.NewTable(), safeOsFuncs))
	return 1
}

// ToLua converts a value of an unstructured object as Argo CD's decodeValue
// does: maps become hash tables, slices 1-indexed arrays (nil elements
// dropped by Append), numbers Lua numbers, json.Number a string, anything
// else nil.
func ToLua(l *lua.LState, v any) lua.LValue {
	switch v := v.(type) {
	case bool:
		return lua.LBool(v)
	case float64:
		return lua.LNumber(v)
	case string:
		return lua.LString(v)
	case json.Number:
		return lua.LString(v)
	case int:
		return lua.LNumber(v)
	case int32:
		return lua.LNumber(v)
	case int64:
		return lua.LNumber(v)
	case []any:
		arr := l.CreateTable(len(v), 0)
		for _, item := range v {
			arr.Append(ToLua(l, item))
		}
		return arr
	case map[string]any:
		tbl := l.CreateTable(0, len(v))
		for key, item := range v {
			tbl.RawSetH(lua.LString(key), ToLua(l, item))
		}
		return tbl
	}
	return lua.LNil
}

// Decode turns a YAML manifest into the map Argo CD holds: the API server's
// JSON decoded as unstructured decodes it, integers as int64.
func Decode(t testing.TB, manifest string) map[string]any {
	t.Helper()
	data, err := yaml.YAMLToJSON([]byte(manifest))
	if err != nil {
		t.Fatalf("YAML to JSON: %v", err)
	}
	var obj map[string]any
	if err := utiljson.Unmarshal(data, &obj); err != nil {
		t.Fatalf("decode JSON: %v", err)
	}
	return obj
}

// Health is what Argo CD's health check says of an object.
type Health struct{ Status, Message string }

// RunHealth runs script with obj set as the global `obj`, then reads its
// result as Argo CD's ExecuteHealthLua does: nil is an empty status, a
// table is read as JSON {status, message} (other types fail that
// decoding), and a status outside Argo CD's set becomes Unknown.
func RunHealth(t testing.TB, useOpenLibs bool, script string, obj map[string]any) (Health, error) {
	t.Helper()
	l := NewLState(t, useOpenLibs)
	l.SetGlobal("obj", ToLua(l, obj))
	if err := l.DoString(script); err != nil {
		return Health{}, err
	}
	switch ret := l.Get(-1).(type) {
	case *lua.LNilType:
		return Health{}, nil
	case *lua.LTable:
		var h Health
		for key, dst := range map[string]*string{"status": &h.Status, "message": &h.Message} {
			switch v := ret.RawGetString(key).(type) {
			case *lua.LNilType:
			case lua.LString:
				*dst = string(v)
			default:
				return Health{}, fmt.Errorf("%s is a %s, Argo CD cannot decode it as a string", key, v.Type())
			}
		}
		switch h.Status {
		case "Healthy", "Progressing", "Degraded", "Suspended", "Missing", "Unknown":
		default:
			return Health{Status: "Unknown", Message: "Lua returned an invalid health status"}, nil
		}
		return h, nil
	default:
		return Health{}, fmt.Errorf("expect table output from Lua script, not %s", ret.Type())
	}
}
