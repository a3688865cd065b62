-- Stand-in: this number belongs to another change of the same release (tern needs contiguous versions for the
-- declared_by column below to apply). When both are merged, that change's file replaces this one.
SELECT 1;
