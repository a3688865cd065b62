package api

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/kmirror/kmirror/connectors/configdef"
)

// The expected strings were printed by Java 25 (java.util.HashMap.toString, Double.toString).
func TestJavaHashMapToString(t *testing.T) {
	t.Parallel()
	p := newProps()
	for _, kv := range [][2]string{{"tasks.max", "1"}, {"topics", "orders"}, {"source.cluster.alias", "A"}, {"foo", ""}, {"name", "my-connector"}} {
		v := kv[1]
		if kv[0] == "foo" {
			p.set(kv[0], nil)
			continue
		}
		p.set(kv[0], &v)
	}
	require.Equal(t, "{source.cluster.alias=A, name=my-connector, tasks.max=1, topics=orders, foo=null}", javaConfigString(p))

	p = newProps()
	for _, k := range []string{"name", "a", "b", "c", "d", "e", "f", "g", "h", "i", "j", "k", "l", "m"} {
		v := string(rune(k[0] - 'a' + 'A'))
		if k == "name" {
			v = "NAME"
		}
		p.set(k, &v)
	}
	require.Equal(t, "{a=A, b=B, c=C, d=D, e=E, f=F, g=G, h=H, i=I, j=J, k=K, l=L, m=M, name=NAME}", javaConfigString(p))

	grown := func(pairs ...any) string {
		o := &jsonObject{values: map[string]any{}}
		for i := 0; i < len(pairs); i += 2 {
			o.keys = append(o.keys, pairs[i].(string))
			o.values[pairs[i].(string)] = pairs[i+1]
		}
		return javaValueString(o)
	}
	require.Equal(t, "{cluster=A, partition=3, topic=t}", grown("cluster", "A", "topic", "t", "partition", int64(3)))
	require.Equal(t, "{sourceClusterAlias=A, targetClusterAlias=B}", grown("sourceClusterAlias", "A", "targetClusterAlias", "B"))
	require.Equal(t, "{partition=0, topic=t, group=g1}", grown("group", "g1", "topic", "t", "partition", int64(0)))
	require.Equal(t, "{Aa=1, BB=2, ключ=v, 😀=x}", grown("ключ", "v", "😀", "x", "Aa", "1", "BB", "2"))
	var many []any
	for i := range 20 {
		many = append(many, "key"+itoa(i), int64(i))
	}
	require.Equal(t, "{key1=1, key2=2, key0=0, key5=5, key6=6, key3=3, key4=4, key9=9, key7=7, key8=8, key11=11, key10=10, "+
		"key15=15, key14=14, key13=13, key12=12, key19=19, key18=18, key17=17, key16=16}", grown(many...))

	require.Equal(t, int32(120), javaStringHash("x"))
	require.Equal(t, int32(-1799810326), javaStringHash("partition"))
	require.Equal(t, int32(1772899), javaStringHash("😀"))
}

func itoa(i int) string {
	if i < 10 {
		return string(rune('0' + i))
	}
	return itoa(i/10) + itoa(i%10)
}

func TestJavaDoubleString(t *testing.T) {
	t.Parallel()
	tenth, fifth := 0.1, 0.2 // variables: constant arithmetic would be exact
	for f, want := range map[float64]string{
		100.0: "100.0", 1.5: "1.5", 0.001: "0.001", 0.0001: "1.0E-4", 1e7: "1.0E7", 9999999.0: "9999999.0",
		1.0e20: "1.0E20", -2.5e-5: "-2.5E-5", tenth + fifth: "0.30000000000000004", 123456.789: "123456.789",
	} {
		require.Equal(t, want, configdef.JavaDouble(f), "%v", f)
	}
}
