package twin_test

import (
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	lua "github.com/yuin/gopher-lua"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// argoHealthResult is what Argo CD's health check says of an object.
type argoHealthResult struct{ Status, Message string }

// argoHealth runs the shipped health check (deploy/argocd/health.lua) on a
// live object as Argo CD runs a script from argocd-cm: without the open
// libraries (package, base and table only), the object as the global
// `obj`, the returned table's status and message read back. It stands in
// for a full Argo CD run where one would only add its sync loop's
// minutes; deploy/argocd's tests reproduce Argo CD's Lua setup in full and
// TestGitOpsArgoCD runs the real Argo CD with the script.
func argoHealth(t *testing.T, obj *unstructured.Unstructured) argoHealthResult {
	t.Helper()
	script, err := os.ReadFile(filepath.Join(repoRoot, "deploy", "argocd", "health.lua"))
	require.NoError(t, err)
	l := lua.NewState(lua.Options{SkipOpenLibs: true})
	defer l.Close()
	for _, lib := range []struct {
		name string
		open lua.LGFunction
	}{{lua.LoadLibName, lua.OpenPackage}, {lua.BaseLibName, lua.OpenBase}, {lua.TabLibName, lua.OpenTable}} {
		require.NoError(t, l.CallByParam(lua.P{Fn: l.NewFunction(lib.open), NRet: 0, Protect: true}, lua.LString(lib.name)))
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Second)
	defer cancel()
	l.SetContext(ctx)
	l.SetGlobal("obj", luaValue(l, obj.Object))
	require.NoError(t, l.DoString(string(script)))
	ret, ok := l.Get(-1).(*lua.LTable)
	require.True(t, ok, "health.lua returned %s, not a table", l.Get(-1).Type())
	return argoHealthResult{Status: ret.RawGetString("status").String(), Message: ret.RawGetString("message").String()}
}

// luaValue converts an unstructured value as Argo CD's decodeValue does.
func luaValue(l *lua.LState, v any) lua.LValue {
	switch v := v.(type) {
	case bool:
		return lua.LBool(v)
	case string:
		return lua.LString(v)
	case float64:
		return lua.LNumber(v)
	case int64:
		return lua.LNumber(v)
	case int:
		return lua.LNumber(v)
	case []any:
		arr := l.CreateTable(len(v), 0)
		for _, item := range v {
			arr.Append(luaValue(l, item))
		}
		return arr
	case map[string]any:
		tbl := l.CreateTable(0, len(v))
		for k, item := range v {
			tbl.RawSetH(lua.LString(k), luaValue(l, item))
		}
		return tbl
	}
	return lua.LNil
}
