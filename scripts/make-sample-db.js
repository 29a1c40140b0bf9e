// Builds examples/shop.db from examples/shop.sql (the README's sample datastore).
const fs = require('node:fs');
const path = require('node:path');
const Database = require('better-sqlite3');

const dir = path.join(__dirname, '..', 'examples');
const file = path.join(dir, 'shop.db');
fs.rmSync(file, { force: true });
const db = new Database(file);
db.exec(fs.readFileSync(path.join(dir, 'shop.sql'), 'utf8'));
db.pragma('journal_mode = DELETE');
db.close();
