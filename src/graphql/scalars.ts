import { DateResolver, DateTimeResolver, JSONResolver } from 'graphql-scalars';
import { builder } from './builder.ts';

builder.addScalarType('JSON', JSONResolver);
builder.addScalarType('DateTime', DateTimeResolver);
builder.addScalarType('Date', DateResolver);
