-- The mm2.properties a connector was declared from (kmirror serve --mm2-properties), NULL for a connector
-- created through the REST API. A declared connector is changed by its file only: REST writes to its config
-- are refused, and the file's next declaration converges it.
ALTER TABLE connectors ADD COLUMN declared_by text;
