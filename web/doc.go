// Package web is kmirror's dashboard, served at /ui by every worker.
//
// It is built on the REST API only: every page is rendered from answers of the API's own HTTP handler, called
// in-process (Config.API), and the charts' script polls the same API from the browser. So the dashboard shows
// exactly what curl, Terraform or kcctl would see, and it imports nothing of the runtime or the store.
//
// Pages are html/template (which escapes every connector name and config value) with small vendored libraries
// embedded from static/: htmx for live fragments, uPlot for the charts and Pico.css for the styles. There is no
// Node build step; static/vendor/VENDOR.txt pins each file by version and sha256, checked by a test.
package web
