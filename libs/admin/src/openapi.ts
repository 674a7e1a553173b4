import { type INestApplication } from '@nestjs/common';
import { ModulesContainer } from '@nestjs/core';
import { DocumentBuilder, SwaggerModule } from '@nestjs/swagger';
import { ADMIN_API } from './admin-api.decorator.js';

/**
 * The admin API's OpenAPI document at /admin/openapi.json and its interactive page at /admin/docs.
 * It holds the modules with @AdminApi controllers and nothing of the application's own; their paths
 * carry the application's global prefix, if it has one.
 */
export function mountAdminOpenApi(app: INestApplication): void {
  const config = new DocumentBuilder()
    .setTitle('WebSocket protocol broker: admin API')
    .setDescription('Origins, credentials, charge points, live connections and the audit log.')
    .setVersion('1')
    .addBearerAuth()
    .build();
  const include = [...app.get(ModulesContainer).values()]
    .filter((module) =>
      [...module.controllers.keys()].some((type) => Reflect.getMetadata(ADMIN_API, type) === true),
    )
    .map((module) => module.metatype);
  const document = SwaggerModule.createDocument(app, config, { include });
  SwaggerModule.setup('admin/docs', app, document, { jsonDocumentUrl: 'admin/openapi.json' });
}
