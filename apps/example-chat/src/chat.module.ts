import { Module } from '@nestjs/common';
import { ChatSubprotocol } from './chat.subprotocol.js';

@Module({ providers: [ChatSubprotocol] })
export class ChatModule {}
