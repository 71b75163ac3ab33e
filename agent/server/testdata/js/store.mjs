// The Store endpoints: put, get, search, list namespaces, delete.
import { client, check } from "./lib.mjs";

await client.store.putItem(["users", "u1", "prefs"], "theme", { color: "dark", size: 3 });
await client.store.putItem(["users", "u1", "prefs"], "lang", { code: "fr", size: 1 });
await client.store.putItem(["users", "u2"], "theme", { color: "light" });
const item = await client.store.getItem(["users", "u1", "prefs"], "theme");
check(item?.value?.color === "dark" && item.key === "theme" && item.namespace.join(".") === "users.u1.prefs" && item.created_at, "getItem returns the item", item);
const found = await client.store.searchItems(["users", "u1"], { filter: { size: { $gt: 2 } } });
check(found.items.length === 1 && found.items[0].key === "theme", "searchItems with a filter", found);
const text = await client.store.searchItems(["users"], { query: "light" });
check(text.items.length === 1 && text.items[0].namespace.join(".") === "users.u2", "searchItems with a query", text);
const ns = await client.store.listNamespaces({ prefix: ["users"], maxDepth: 2 });
check(JSON.stringify(ns.namespaces) === JSON.stringify([["users", "u1"], ["users", "u2"]]), "listNamespaces cut to max_depth", ns);
await client.store.deleteItem(["users", "u1", "prefs"], "theme");
check((await client.store.getItem(["users", "u1", "prefs"], "theme")) === null, "a deleted item reads as null");
let status;
try { await client.store.putItem([], "k", { a: 1 }); } catch (e) { status = e.status; }
check(status === 422, "an empty namespace is refused with 422", status);
