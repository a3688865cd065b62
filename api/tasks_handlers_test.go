package api_test

import (
	"net/http"
	"testing"
)

func TestTasksAndTasksConfig(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	requireError(t, f.do("GET", "/connectors/c/tasks", ""), http.StatusNotFound, "Connector c not found")
	requireError(t, f.do("GET", "/connectors/c/tasks-config", ""), http.StatusNotFound, "Connector c not found")

	f.create("c", sourceConfig())
	requireJSON(t, f.do("GET", "/connectors/c/tasks", ""), http.StatusOK, `[]`)
	requireJSON(t, f.do("GET", "/connectors/c/tasks-config", ""), http.StatusOK, `{}`)

	f.setTasks("c", 2)
	requireJSON(t, f.do("GET", "/connectors/c/tasks", ""), http.StatusOK,
		`[{"id":{"connector":"c","task":0},"config":{"task.class":"org.apache.kafka.connect.mirror.MirrorSourceTask","task.index":"0"}},`+
			`{"id":{"connector":"c","task":1},"config":{"task.class":"org.apache.kafka.connect.mirror.MirrorSourceTask","task.index":"1"}}]`)
	requireJSON(t, f.do("GET", "/connectors/c/tasks-config", ""), http.StatusOK,
		`{"c-0":{"task.class":"org.apache.kafka.connect.mirror.MirrorSourceTask","task.index":"0"},`+
			`"c-1":{"task.class":"org.apache.kafka.connect.mirror.MirrorSourceTask","task.index":"1"}}`)
}
