// Placeholder entry; the client is built in its own commits.
export {};
