export * from './names.js';
export * from './types.js';
export * from './errors.js';
export * from './field-errors.js';
export * from './schema.js';
export * from './meta-schema.js';
export * from './catalog.js';
export { builtinResources, builtinCatalog } from './resources/index.js';
