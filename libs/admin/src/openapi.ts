import { type INestApplication } from '@nestjs/common';
import { DocumentBuilder, SwaggerModule } from '@nestjs/swagger';

/** The admin API's OpenAPI document at /admin/openapi.json and its interactive page at /admin/docs. */
export function mountAdminOpenApi(app: INestApplication): void {
  const config = new DocumentBuilder()
    .setTitle('WebSocket protocol broker: admin API')
    .setDescription('Origins, credentials, charge points, live connections and the audit log.')
    .setVersion('1')
    .addBearerAuth()
    .build();
  const document = SwaggerModule.createDocument(app, config);
  document.paths = Object.fromEntries(
    Object.entries(document.paths).filter(([path]) => path.startsWith('/admin/')),
  );
  SwaggerModule.setup('admin/docs', app, document, { jsonDocumentUrl: 'admin/openapi.json' });
}
