// graphql's ES module build of its printer (the console bundles it alone, not all of graphql), typed
// as the package's CommonJS entry is.
declare module 'graphql/language/printer.mjs' {
  export { print } from 'graphql/language/printer';
}
